// RoostArchive
