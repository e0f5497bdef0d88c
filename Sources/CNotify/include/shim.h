#pragma once
// libnotify's own header pulls in gdk-pixbuf, whose pkg-config flags carry -pthread, which SwiftPM
// rejects with a warning. Roost uses a handful of libnotify calls, declared here from its documented API.
#include <glib.h>
#include <glib-object.h>
// GDBus (session bus checks, idle time) lives in gio, whose headers need no extra flags.
#include <gio/gio.h>
// GIO and GObject are opened on first use too (CGObject): roost_gio_load.
#include "roost_gobject.h"

// libnotify is opened with dlopen on first use (notify.c; see CLoader): NULL when it is loaded, otherwise why not.
const char *roost_notify_load(void);

typedef struct _NotifyNotification NotifyNotification;
typedef void (*NotifyActionCallback)(NotifyNotification *notification, char *action, gpointer user_data);

typedef enum {
    NOTIFY_URGENCY_LOW,
    NOTIFY_URGENCY_NORMAL,
    NOTIFY_URGENCY_CRITICAL,
} NotifyUrgency;

gboolean notify_init(const char *app_name);
void notify_uninit(void);
gboolean notify_is_initted(void);
GList *notify_get_server_caps(void);
gboolean notify_get_server_info(char **ret_name, char **ret_vendor, char **ret_version, char **ret_spec_version);
NotifyNotification *notify_notification_new(const char *summary, const char *body, const char *icon);
gboolean notify_notification_update(NotifyNotification *notification, const char *summary, const char *body, const char *icon);
gboolean notify_notification_show(NotifyNotification *notification, GError **error);
void notify_notification_set_timeout(NotifyNotification *notification, gint timeout);
void notify_notification_set_category(NotifyNotification *notification, const char *category);
void notify_notification_set_urgency(NotifyNotification *notification, NotifyUrgency urgency);
void notify_notification_set_hint(NotifyNotification *notification, const char *key, GVariant *value);
void notify_notification_set_app_name(NotifyNotification *notification, const char *app_name);
void notify_notification_add_action(NotifyNotification *notification, const char *action, const char *label,
                                    NotifyActionCallback callback, gpointer user_data, GDestroyNotify free_func);
void notify_notification_clear_actions(NotifyNotification *notification);
gboolean notify_notification_close(NotifyNotification *notification, GError **error);
gint notify_notification_get_closed_reason(const NotifyNotification *notification);
// The notification's id on the server (libnotify's "id" property); 0 before it was shown.
gint roost_notify_notification_id(NotifyNotification *notification);

