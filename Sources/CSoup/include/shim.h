#pragma once
// libsoup 3's pkg-config flags (through gio) carry -pthread, which SwiftPM rejects with a warning, so the
// module takes glib's flags and includes the server's headers by their path under /usr/include (each of
// them includes its siblings with quotes, so no libsoup include directory is needed). soup.h itself is
// not included: it names its siblings as <libsoup/...>.
#include <glib.h>
#include <gio/gio.h>
#include <glib-unix.h>
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

/// A message's signal without arguments: "finished" (the response was sent, or the client went away), "disconnected".
static inline gulong roost_message_on_signal(SoupServerMessage *message, const char *signal, RoostMessageSignal callback,
                                             gpointer data, GClosureNotify destroy) {
    return g_signal_connect_data(message, signal, G_CALLBACK(callback), data, destroy, (GConnectFlags)0);
}

typedef void (*RoostMessageWrote)(SoupServerMessage *message, guint size, gpointer data);

/// "wrote-body-data": `size` bytes of the response body reached the connection (a streamed body's backlog shrinks).
static inline gulong roost_message_on_wrote_body_data(SoupServerMessage *message, RoostMessageWrote callback, gpointer data,
                                                      GClosureNotify destroy) {
    return g_signal_connect_data(message, "wrote-body-data", G_CALLBACK(callback), data, destroy, (GConnectFlags)0);
}

