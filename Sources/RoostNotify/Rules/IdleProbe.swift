import RoostCore

/// How long the desktop session has been idle, in seconds, or nil when the session does not say.
/// Asks GNOME's org.gnome.Mutter.IdleMonitor (GetIdletime, milliseconds) first, then
/// org.freedesktop.ScreenSaver (GetSessionIdleTime, seconds), on the session bus, each with a 1 s timeout.
struct IdleProbe: Sendable {
    var query: @Sendable () async -> Int?

    static let sessionBus = IdleProbe {
        await Deadline.blocking(seconds: 3, timedOut: nil) { () -> Int? in
            guard let bus = SessionBusConnection.open() else { return nil }
            if let value = try? bus.call(destination: "org.gnome.Mutter.IdleMonitor", path: "/org/gnome/Mutter/IdleMonitor/Core",
                                         interface: "org.gnome.Mutter.IdleMonitor", method: "GetIdletime", timeoutMilliseconds: 1000),
               case let .number(milliseconds) = value {
                return Int(milliseconds / 1000)
            }
            if let value = try? bus.call(destination: "org.freedesktop.ScreenSaver", path: "/org/freedesktop/ScreenSaver",
                                         interface: "org.freedesktop.ScreenSaver", method: "GetSessionIdleTime", timeoutMilliseconds: 1000),
               case let .number(seconds) = value {
                return Int(seconds)
            }
            return nil
        }
    }
}
