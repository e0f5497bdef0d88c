public import Foundation

/// Where the notification layer gets the time, so tests can move it.
public struct NotifyClock: Sendable {
    public var now: @Sendable () -> Date
    public var timeZone: TimeZone

    public init(now: @escaping @Sendable () -> Date, timeZone: TimeZone = .current) {
        self.now = now
        self.timeZone = timeZone
    }

    public static let system = NotifyClock(now: { Date() })

    var milliseconds: Int64 { Int64((now().timeIntervalSince1970 * 1000).rounded()) }

    /// Minutes after local midnight, for quiet hours.
    var minuteOfDay: Int {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.hour, .minute], from: now())
        return (parts.hour ?? 0) * 60 + (parts.minute ?? 0)
    }
}
