#pragma once
// libsoup 3's pkg-config flags (through gio) carry -pthread, which SwiftPM rejects with a warning, so the
// module takes glib's flags and includes the server's headers by their path under /usr/include (each of
// them includes its siblings with quotes, so no libsoup include directory is needed). soup.h itself is
// not included: it names its siblings as <libsoup/...>.
#include <glib.h>
#include <gio/gio.h>
#include <libsoup-3.0/libsoup/soup-version.h>
#include <libsoup-3.0/libsoup/soup-server.h>
#include <libsoup-3.0/libsoup/soup-server-message.h>
#include <libsoup-3.0/libsoup/soup-message-headers.h>
#include <libsoup-3.0/libsoup/soup-message-body.h>
#include <libsoup-3.0/libsoup/soup-headers.h>
#include <libsoup-3.0/libsoup/soup-form.h>
#include <libsoup-3.0/libsoup/soup-uri-utils.h>
#include <libsoup-3.0/libsoup/soup-status.h>

// libsoup is opened with dlopen on first use (soup.c; see CLoader): NULL when it is loaded, otherwise why not.
const char *roost_soup_load(void);

// soup_server_new and g_signal_connect are variadic or macros, which Swift cannot call.
SoupServer *roost_soup_server_new(void);

typedef void (*RoostMessageSignal)(SoupServerMessage *message, gpointer data);

/// "finished": the response was sent, or the client went away; either way the message is done.
static inline gulong roost_message_on_finished(SoupServerMessage *message, RoostMessageSignal callback, gpointer data,
                                               GClosureNotify destroy) {
    return g_signal_connect_data(message, "finished", G_CALLBACK(callback), data, destroy, (GConnectFlags)0);
}

typedef void (*RoostFileChanged)(GFileMonitor *monitor, GFile *file, GFile *other, GFileMonitorEvent event, gpointer data);

static inline gulong roost_file_monitor_on_changed(GFileMonitor *monitor, RoostFileChanged callback, gpointer data,
                                                   GClosureNotify destroy) {
    return g_signal_connect_data(monitor, "changed", G_CALLBACK(callback), data, destroy, (GConnectFlags)0);
}
