public import Foundation
import RoostCore

/// Where the notification layer gets the time, so tests can move it, and how it waits for a coalescing window
/// to end, so tests can end the window when they choose (a loaded machine can spend longer than a short window
/// between two of a test's steps).
public struct NotifyClock: Sendable {
    public var now: @Sendable () -> Date
    public var timeZone: TimeZone
    /// Returns when the duration has passed (or, in tests, when the test says so).
    public var wait: @Sendable (Duration) async -> Void

    public init(now: @escaping @Sendable () -> Date, timeZone: TimeZone = .current,
                wait: @escaping @Sendable (Duration) async -> Void = { try? await Task.sleep(for: $0) }) {
        self.now = now
        self.timeZone = timeZone
        self.wait = wait
    }

    public static let system = NotifyClock(now: { Date() })

    var milliseconds: Int64 { Timestamp.milliseconds(now()) }

    /// Minutes after local midnight, for quiet hours.
    var minuteOfDay: Int {
        let civil = ZoneClock(timeZone: timeZone).civil(milliseconds)
        return civil.hour * 60 + civil.minute
    }
}
