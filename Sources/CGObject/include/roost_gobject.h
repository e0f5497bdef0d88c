#pragma once
// GObject and GIO are not linked into `roost` either: only the agent's notifications and file handling, `roost
// serve` and thumbnails call them, each after opening a library that depends on them (libnotify, libsoup,
// gdk-pixbuf), so a read-only command does not load them with their own dependencies (gmodule, libmount,
// libblkid, libselinux, libffi, zlib). gobject.c forwards the functions Roost calls (see CLoader).

/// Opens GIO (and with it GObject) on first use: NULL when it is loaded, otherwise why not (dlerror's text).
/// Callers of GIO outside libnotify/libsoup paths (the session bus, media type guesses) check it first.
const char *roost_gio_load(void);
