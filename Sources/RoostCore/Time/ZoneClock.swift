public import Foundation

/// Turns UTC milliseconds into the wall-clock time of a zone (UTC, or the local one by default) and back.
/// Caches the current offset until the zone's next transition, because asking the zone for every message
/// of a large export or search is slow. Not shared between threads: each user makes its own.
public final class ZoneClock {
    public let timeZone: TimeZone
    private var cachedFrom: Int64 = .max
    private var cachedUntil: Int64 = .min
    private var cachedOffset = 0

    /// The zone's rules are only asked about years 1…9999; outside them the offset of the nearest end holds.
    private static let askable: ClosedRange<Int64> = -62_135_596_800_000...253_402_300_799_999

    public init(timeZone: TimeZone) {
        self.timeZone = timeZone
    }

    /// The user's zone (`TZ`, else the system's).
    public static func local() -> ZoneClock { ZoneClock(timeZone: .current) }

    public static func utc() -> ZoneClock { ZoneClock(timeZone: TimeZone(identifier: "UTC")!) }

    public var isUTC: Bool { timeZone.secondsFromGMT() == 0 && timeZone.nextDaylightSavingTimeTransition == nil }

    /// Seconds east of UTC in force at `milliseconds`.
    public func offset(at milliseconds: Int64) -> Int {
        if milliseconds >= cachedFrom && milliseconds < cachedUntil { return cachedOffset }
        let asked = min(max(milliseconds, Self.askable.lowerBound), Self.askable.upperBound)
        let date = Date(timeIntervalSince1970: TimeInterval(asked) / 1000)
        cachedOffset = timeZone.secondsFromGMT(for: date)
        if milliseconds < Self.askable.lowerBound {
            (cachedFrom, cachedUntil) = (.min, Self.askable.lowerBound)
        } else if milliseconds > Self.askable.upperBound {
            (cachedFrom, cachedUntil) = (Self.askable.upperBound + 1, .max)
        } else {
            cachedFrom = milliseconds
            cachedUntil = timeZone.nextDaylightSavingTimeTransition(after: date).map(Timestamp.milliseconds) ?? .max
            if cachedUntil <= milliseconds { cachedUntil = milliseconds + 1 }
        }
        return cachedOffset
    }

    public func civil(_ milliseconds: Int64) -> CivilTime {
        CivilTime(milliseconds: milliseconds, offsetSeconds: offset(at: milliseconds))
    }

    /// UTC milliseconds of local midnight starting the month `year`-`month` (month may overflow into the next
    /// year); saturates at the ends of `Int64`.
    public func startOfMonth(year: Int, month: Int) -> Int64 {
        let index = Int64(year) * 12 + Int64(month - 1)
        let (y, m) = CivilTime.floorDivide(index, 12)
        guard let local = CivilTime.milliseconds(days: CivilTime.days(year: Int(y), month: Int(m) + 1, day: 1), msOfDay: 0) else {
            return index < 0 ? .min : .max
        }
        return utc(fromLocal: local)
    }

    /// UTC milliseconds of a wall-clock time of the zone, given as milliseconds since 1970-01-01 00:00 local.
    /// (A time skipped or repeated by a daylight-saving change gets one of the two readings.) Saturates.
    public func utc(fromLocal local: Int64) -> Int64 {
        // The offset in force at that local time; try the offset of the instant itself, then correct once.
        let guess = local.subtractingReportingOverflow(Int64(offset(at: local)) * 1000)
        let instant = guess.overflow ? local : guess.partialValue
        let result = local.subtractingReportingOverflow(Int64(offset(at: instant)) * 1000)
        return result.overflow ? (local < 0 ? .min : .max) : result.partialValue
    }

    // MARK: Text for people

    /// `2026-01-15 13:05` (or with `:09` seconds) in this zone.
    public func minuteText(_ milliseconds: Int64, seconds: Bool = false) -> String {
        let time = civil(milliseconds)
        return "\(time.dateText) \(seconds ? time.secondText : time.minuteText)"
    }

    /// `minuteText(milliseconds)` appended as bytes, without making a String (every line of a long transcript).
    public func appendMinuteText(_ milliseconds: Int64, to out: inout [UInt8]) {
        let time = civil(milliseconds)
        // Four-digit years as `CivilTime.pad` writes them; any other year through the text itself.
        guard time.year >= 0 && time.year <= 9999 else { return out.append(contentsOf: minuteText(milliseconds).utf8) }
        func digits(_ value: Int, _ width: Int) {
            var divisor = width == 4 ? 1000 : 10
            while divisor > 0 {
                out.append(UInt8(truncatingIfNeeded: 0x30 + value / divisor % 10))
                divisor /= 10
            }
        }
        digits(time.year, 4); out.append(0x2D); digits(time.month, 2); out.append(0x2D); digits(time.day, 2)
        out.append(0x20); digits(time.hour, 2); out.append(0x3A); digits(time.minute, 2)
    }
}

extension Timestamp {
    /// UTC milliseconds of a Foundation `Date` (a time zone's transition, a retry's time, "now" in tests), rounded
    /// down: the one way from a `Date` into Roost's time.
    public static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }
}
