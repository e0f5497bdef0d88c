internal import CNotify

/// Owns one libnotify `NotifyNotification`. Created, used and released on the desktop GLib thread only.
final class DesktopNotificationHandle {
    let pointer: OpaquePointer

    init(summary: String) {
        pointer = notify_notification_new(summary, nil, nil)
    }

    deinit {
        g_object_unref(UnsafeMutableRawPointer(pointer))
    }
}
