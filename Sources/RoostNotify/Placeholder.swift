// RoostNotify
