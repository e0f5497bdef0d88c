import Foundation

/// `[notify] quiet_hours = 22:00-07:00`: a daily span of local time without notifications; it may wrap
/// past midnight. Start is included, end is not.
public struct QuietHours: Sendable, Hashable {
    /// Minutes after local midnight.
    public var start: Int
    public var end: Int

    public init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let start = Self.minutes(parts[0]), let end = Self.minutes(parts[1]), start != end else {
            return nil
        }
        self.start = start
        self.end = end
    }

    public func contains(minuteOfDay minute: Int) -> Bool {
        start < end ? (minute >= start && minute < end) : (minute >= start || minute < end)
    }

    private static func minutes(_ text: Substring) -> Int? {
        let pieces = text.trimmingCharacters(in: .whitespaces).split(separator: ":", omittingEmptySubsequences: false)
        guard pieces.count == 2, pieces[1].count == 2, let hour = Int(pieces[0]), let minute = Int(pieces[1]),
              (0...24).contains(hour), (0...59).contains(minute), hour * 60 + minute <= 24 * 60 else { return nil }
        return (hour * 60 + minute) % (24 * 60)
    }
}
