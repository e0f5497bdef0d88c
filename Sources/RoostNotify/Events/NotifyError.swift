public import RoostCore

/// Why a sink could not deliver a notification. Descriptions never contain a token, password or URL
/// credentials.
public enum NotifyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No desktop notification server owns org.freedesktop.Notifications on the session bus.
    case noNotificationServer(String)
    /// No D-Bus session bus is reachable (DBUS_SESSION_BUS_ADDRESS unset and no $XDG_RUNTIME_DIR/bus).
    case noSessionBus
    case timedOut(sink: String, seconds: Int)
    case desktop(String)
    case commandFailed(program: String, detail: String)
    case http(host: String, status: Int)
    case transport(host: String, detail: String)
    case smtp(host: String, detail: String)
    /// A `token_command` or `password_command` failed or printed nothing.
    case secretCommand(sink: String, key: String, detail: String)
    case unknownSink(String)
    /// libnotify (opened when the desktop sink first shows something) is missing.
    case library(LibraryLoadError)

    public var description: String {
        switch self {
        case let .library(error):
            "\(error); install libnotify4 or configure another sink"
        case let .noNotificationServer(detail):
            "no desktop notification server on the session bus (\(detail)); start one (your desktop's, or e.g. dunst or mako) or configure another sink"
        case .noSessionBus:
            "no D-Bus session bus: DBUS_SESSION_BUS_ADDRESS is not set and $XDG_RUNTIME_DIR/bus does not exist; desktop notifications need a graphical session"
        case let .timedOut(sink, seconds):
            "sink \(sink) did not finish within \(seconds) s; raise its timeout_seconds if the receiver is slow"
        case let .desktop(detail):
            "desktop notification failed: \(detail)"
        case let .commandFailed(program, detail):
            "command \(program) failed: \(detail)"
        case let .http(host, status):
            "\(host) answered HTTP \(status)" + (status == 401 || status == 403 ? "; check the sink's token" : "")
        case let .transport(host, detail):
            "could not reach \(host): \(detail)"
        case let .smtp(host, detail):
            "sending mail through \(host) failed: \(detail)"
        case let .secretCommand(sink, key, detail):
            "[sink \(sink)] \(key) \(detail); run it by hand to check it prints the secret on its first line"
        case let .unknownSink(name):
            "no sink named \(name) is configured"
        }
    }
}
