// The libnotify functions Roost calls, forwarded to the library opened on first use (CLoader).
#include "shim.h"
#include "roost_loader.h"

ROOST_LIBRARY(libnotify, "libnotify.so.4");

const char *roost_notify_load(void) { return roost_library_load(&libnotify); }

ROOST_FORWARD(libnotify, gboolean, notify_init, (const char *app_name), (app_name))
ROOST_FORWARD_VOID(libnotify, notify_uninit, (void), ())
ROOST_FORWARD(libnotify, gboolean, notify_is_initted, (void), ())
ROOST_FORWARD(libnotify, GList *, notify_get_server_caps, (void), ())
ROOST_FORWARD(libnotify, gboolean, notify_get_server_info, (char **ret_name, char **ret_vendor, char **ret_version, char **ret_spec_version), (ret_name, ret_vendor, ret_version, ret_spec_version))
ROOST_FORWARD(libnotify, NotifyNotification *, notify_notification_new, (const char *summary, const char *body, const char *icon), (summary, body, icon))
ROOST_FORWARD(libnotify, gboolean, notify_notification_update, (NotifyNotification *notification, const char *summary, const char *body, const char *icon), (notification, summary, body, icon))
ROOST_FORWARD(libnotify, gboolean, notify_notification_show, (NotifyNotification *notification, GError **error), (notification, error))
ROOST_FORWARD_VOID(libnotify, notify_notification_set_timeout, (NotifyNotification *notification, gint timeout), (notification, timeout))
ROOST_FORWARD_VOID(libnotify, notify_notification_set_category, (NotifyNotification *notification, const char *category), (notification, category))
ROOST_FORWARD_VOID(libnotify, notify_notification_set_urgency, (NotifyNotification *notification, NotifyUrgency urgency), (notification, urgency))
ROOST_FORWARD_VOID(libnotify, notify_notification_set_hint, (NotifyNotification *notification, const char *key, GVariant *value), (notification, key, value))
ROOST_FORWARD_VOID(libnotify, notify_notification_set_app_name, (NotifyNotification *notification, const char *app_name), (notification, app_name))
ROOST_FORWARD_VOID(libnotify, notify_notification_add_action, (NotifyNotification *notification, const char *action, const char *label, NotifyActionCallback callback, gpointer user_data, GDestroyNotify free_func), (notification, action, label, callback, user_data, free_func))
ROOST_FORWARD_VOID(libnotify, notify_notification_clear_actions, (NotifyNotification *notification), (notification))
ROOST_FORWARD(libnotify, gboolean, notify_notification_close, (NotifyNotification *notification, GError **error), (notification, error))
ROOST_FORWARD(libnotify, gint, notify_notification_get_closed_reason, (const NotifyNotification *notification), (notification))

// The id the notification server gave the notification (0 before it was shown): libnotify keeps it in the "id"
// property only, and NotificationReplied names a notification by it.
gint roost_notify_notification_id(NotifyNotification *notification) {
    GValue value = G_VALUE_INIT;
    g_value_init(&value, G_TYPE_INT);
    g_object_get_property((GObject *)notification, "id", &value);
    gint id = g_value_get_int(&value);
    g_value_unset(&value);
    return id;
}
