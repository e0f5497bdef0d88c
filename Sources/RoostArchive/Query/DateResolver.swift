import Foundation
import RoostCore

/// Resolves `DateExpression`s to UTC millisecond spans `[start, end)` for a given "now" and time zone.
/// Absolute dates span the unit written (a day, a month, a minute); `today`/`yesterday` span a day;
/// relative dates are instants (start == end). Calendar arithmetic is the program's one codec's
/// (`CivilTime`, proleptic Gregorian, wall-clock days across daylight-saving changes), saturating at the
/// ends of `Int64` whatever the query says.
struct DateResolver {
    let now: Int64
    let clock: ZoneClock

    init(now: Date, timeZone: TimeZone) {
        self.now = Timestamp.milliseconds(now)
        clock = ZoneClock(timeZone: timeZone)
    }

    func span(_ expression: DateExpression) -> (start: Int64, end: Int64) {
        let today = clock.civil(now)
        let todayDays = CivilTime.days(year: today.year, month: today.month, day: today.day)
        switch expression {
        case .today:
            return (midnight(todayDays), midnight(todayDays + 1))
        case .yesterday:
            return (midnight(todayDays - 1), midnight(todayDays))
        case .relative(let amount, let unit):
            let amount = Int64(clamping: amount)
            let msOfDay = Int64(((today.hour * 60 + today.minute) * 60 + today.second) * 1000 + today.millisecond)
            switch unit {
            case .hour:
                return instant(saturatingSubtract(now, saturatingMultiply(amount, 3_600_000)))
            case .day, .week:
                let days = saturatingMultiply(amount, unit == .week ? 7 : 1)
                return instant(local(days: saturatingSubtract(todayDays, days), msOfDay: msOfDay))
            case .month, .year:
                let months = saturatingMultiply(amount, unit == .year ? 12 : 1)
                let (year, month) = CivilTime.floorDivide(saturatingSubtract(Int64(today.year) * 12 + Int64(today.month - 1), months), 12)
                // Years beyond a few hundred million have no day count in Int64 milliseconds anyway.
                guard year > -300_000_000 else { return instant(.min) }
                let day = min(today.day, CivilTime.daysInMonth(year: Int(year), month: Int(month) + 1))
                return instant(local(days: CivilTime.days(year: Int(year), month: Int(month) + 1, day: day), msOfDay: msOfDay))
            }
        case .absolute(let year, let month, let day, let hour, let minute):
            let startDays = CivilTime.days(year: year, month: month ?? 1, day: day ?? 1)
            let startMs = Int64(((hour ?? 0) * 60 + (minute ?? 0)) * 60_000)
            let start = local(days: startDays, msOfDay: startMs)
            if minute != nil { return (start, local(days: startDays, msOfDay: startMs + 60_000)) }
            if day != nil { return (start, midnight(startDays + 1)) }
            if let month { return (start, midnight(CivilTime.days(year: month == 12 ? year + 1 : year, month: month % 12 + 1, day: 1))) }
            return (start, midnight(CivilTime.days(year: year + 1, month: 1, day: 1)))
        }
    }

    private func instant(_ ms: Int64) -> (start: Int64, end: Int64) { (ms, ms) }

    private func midnight(_ days: Int64) -> Int64 { local(days: days, msOfDay: 0) }

    /// UTC milliseconds of a wall-clock time of the zone.
    private func local(days: Int64, msOfDay: Int64) -> Int64 {
        guard let local = CivilTime.milliseconds(days: days, msOfDay: msOfDay) else { return days < 0 ? .min : .max }
        return clock.utc(fromLocal: local)
    }
}

/// `a * b`, held at the ends of `Int64` instead of trapping.
private func saturatingMultiply(_ a: Int64, _ b: Int64) -> Int64 {
    let (product, overflow) = a.multipliedReportingOverflow(by: b)
    return overflow ? ((a < 0) != (b < 0) ? .min : .max) : product
}

/// `a - b`, held at the ends of `Int64` instead of trapping.
private func saturatingSubtract(_ a: Int64, _ b: Int64) -> Int64 {
    let (difference, overflow) = a.subtractingReportingOverflow(b)
    return overflow ? (b > 0 ? .min : .max) : difference
}
