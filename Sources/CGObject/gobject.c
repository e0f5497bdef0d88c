// The GObject and GIO functions Roost calls, forwarded to the libraries opened on first use (CLoader).
#include <glib-object.h>
#include <gio/gio.h>
#include "roost_gobject.h"
#include "roost_loader.h"

// A type-preserving macro over the function in GLib ≥ 2.56; the forwarder defines the function itself.
#undef g_object_ref

ROOST_LIBRARY(libgobject, "libgobject-2.0.so.0");
ROOST_LIBRARY(libgio, "libgio-2.0.so.0");

const char *roost_gio_load(void) { return roost_library_load(&libgio); }

ROOST_FORWARD(libgobject, gpointer, g_object_ref, (gpointer object), (object))
ROOST_FORWARD_VOID(libgobject, g_object_unref, (gpointer object), (object))
ROOST_FORWARD(libgobject, gulong, g_signal_connect_data, (gpointer instance, const gchar *detailed_signal, GCallback c_handler, gpointer data, GClosureNotify destroy_data, GConnectFlags connect_flags), (instance, detailed_signal, c_handler, data, destroy_data, connect_flags))

ROOST_FORWARD(libgio, GDBusConnection *, g_bus_get_sync, (GBusType bus_type, GCancellable *cancellable, GError **error), (bus_type, cancellable, error))
ROOST_FORWARD(libgio, GVariant *, g_dbus_connection_call_sync, (GDBusConnection *connection, const gchar *bus_name, const gchar *object_path, const gchar *interface_name, const gchar *method_name, GVariant *parameters, const GVariantType *reply_type, GDBusCallFlags flags, gint timeout_msec, GCancellable *cancellable, GError **error), (connection, bus_name, object_path, interface_name, method_name, parameters, reply_type, flags, timeout_msec, cancellable, error))
ROOST_FORWARD(libgio, gchar *, g_content_type_guess, (const gchar *filename, const guchar *data, gsize data_size, gboolean *result_uncertain), (filename, data, data_size, result_uncertain))
ROOST_FORWARD(libgio, gchar *, g_content_type_get_mime_type, (const gchar *type), (type))
ROOST_FORWARD(libgio, GSocketAddress *, g_inet_socket_address_new_from_string, (const char *address, guint port), (address, port))

// The web view's connections (accepted by Roost, then handed to libsoup: see SoupHTTPServer).
ROOST_FORWARD(libgio, GSocket *, g_socket_new_from_fd, (gint fd, GError **error), (fd, error))
ROOST_FORWARD_VOID(libgio, g_socket_set_timeout, (GSocket *socket, guint timeout), (socket, timeout))
ROOST_FORWARD(libgio, GSocketConnection *, g_socket_connection_factory_create_connection, (GSocket *socket), (socket))
ROOST_FORWARD(libgio, GSocketAddress *, g_socket_get_local_address, (GSocket *socket, GError **error), (socket, error))
ROOST_FORWARD(libgio, GSocketAddress *, g_socket_get_remote_address, (GSocket *socket, GError **error), (socket, error))
ROOST_FORWARD(libgio, gboolean, g_socket_shutdown, (GSocket *socket, gboolean shutdown_read, gboolean shutdown_write, GError **error), (socket, shutdown_read, shutdown_write, error))
ROOST_FORWARD(libgio, gboolean, g_socket_is_closed, (GSocket *socket), (socket))
ROOST_FORWARD(libgio, gboolean, g_socket_address_to_native, (GSocketAddress *address, gpointer dest, gsize destlen, GError **error), (address, dest, destlen, error))
ROOST_FORWARD(libgio, gboolean, g_socket_close, (GSocket *socket, GError **error), (socket, error))
ROOST_FORWARD_VOID(libgobject, g_object_weak_ref, (GObject *object, GWeakNotify notify, gpointer data), (object, notify, data))
// Reading a libnotify notification's id (a GObject property) and the notification server's NotificationReplied signal.
ROOST_FORWARD(libgobject, GValue *, g_value_init, (GValue *value, GType g_type), (value, g_type))
ROOST_FORWARD(libgobject, gint, g_value_get_int, (const GValue *value), (value))
ROOST_FORWARD_VOID(libgobject, g_value_unset, (GValue *value), (value))
ROOST_FORWARD_VOID(libgobject, g_object_get_property, (GObject *object, const gchar *property_name, GValue *value), (object, property_name, value))
ROOST_FORWARD(libgio, guint, g_dbus_connection_signal_subscribe, (GDBusConnection *connection, const gchar *sender, const gchar *interface_name, const gchar *member, const gchar *object_path, const gchar *arg0, GDBusSignalFlags flags, GDBusSignalCallback callback, gpointer user_data, GDestroyNotify user_data_free_func), (connection, sender, interface_name, member, object_path, arg0, flags, callback, user_data, user_data_free_func))
ROOST_FORWARD_VOID(libgio, g_dbus_connection_signal_unsubscribe, (GDBusConnection *connection, guint subscription_id), (connection, subscription_id))
