internal import CNotify

/// Owns one libnotify `NotifyNotification`. Created, used and released on the desktop GLib thread only.
final class DesktopNotificationHandle {
    let pointer: OpaquePointer
    /// Where an inline reply typed into this notification goes (a message notification on a server with
    /// `inline-reply`), found by the id the server's NotificationReplied signal names.
    var replyTarget: DesktopActionContext?

    init(summary: String) {
        pointer = notify_notification_new(summary, nil, nil)
    }

    /// The id the notification server gave it (0 before it was shown).
    var serverID: UInt32 { UInt32(bitPattern: roost_notify_notification_id(pointer)) }

    deinit {
        g_object_unref(UnsafeMutableRawPointer(pointer))
    }
}
