public import Foundation
import RoostCore

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
        let civil = ZoneClock(timeZone: timeZone).civil(milliseconds)
        return civil.hour * 60 + civil.minute
    }
}
