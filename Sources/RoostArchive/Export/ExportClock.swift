import Foundation

/// Turns archive times (UTC milliseconds) into the calendar of the export: UTC, or a time zone (the local
/// one by default). Caches the current offset until the zone's next transition, because asking the zone
/// for every message of a large export is slow.
final class ExportClock {
    let timeZone: TimeZone
    private var cachedFrom: Int64 = .max
    private var cachedUntil: Int64 = .min
    private var cachedOffset = 0

    init(timeZone: TimeZone) {
        self.timeZone = timeZone
    }

    var isUTC: Bool { timeZone.secondsFromGMT() == 0 && timeZone.nextDaylightSavingTimeTransition == nil }

    func offset(at milliseconds: Int64) -> Int {
        if milliseconds >= cachedFrom && milliseconds < cachedUntil { return cachedOffset }
        let date = Date(timeIntervalSince1970: TimeInterval(milliseconds) / 1000)
        cachedOffset = timeZone.secondsFromGMT(for: date)
        cachedFrom = milliseconds
        if let next = timeZone.nextDaylightSavingTimeTransition(after: date) {
            cachedUntil = Int64((next.timeIntervalSince1970 * 1000).rounded(.down))
        } else {
            cachedUntil = .max
        }
        return cachedOffset
    }

    func civil(_ milliseconds: Int64) -> CivilTime {
        CivilTime(milliseconds: milliseconds, offsetSeconds: offset(at: milliseconds))
    }

    /// UTC milliseconds of local midnight starting the month `year`-`month` (month may overflow into the next year).
    func startOfMonth(year: Int, month: Int) -> Int64 {
        let normalizedYear = year + (month - 1) / 12
        let normalizedMonth = (month - 1) % 12 + 1
        return utc(fromLocal: CivilTime.days(year: normalizedYear, month: normalizedMonth, day: 1) * 86_400_000)
    }

    /// UTC milliseconds of a wall-clock time of the zone, given as milliseconds since 1970-01-01 00:00 local.
    /// (A time skipped or repeated by a daylight-saving change gets one of the two readings.)
    func utc(fromLocal local: Int64) -> Int64 {
        // The offset in force at that local time; try the offset of the instant itself, then correct once.
        let guess = local - Int64(offset(at: local)) * 1000
        return local - Int64(offset(at: guess)) * 1000
    }
}
