/// A calendar date and time of day computed from UTC milliseconds plus an offset, in the proleptic
/// Gregorian calendar (the calendar of RFC 3339 and XEP-0082, extended before 1582 and beyond 9999), with
/// the day arithmetic done by hand: Foundation's formatters cost microseconds per call, which dominates an
/// export of a million messages, and its calendar switches to Julian dates before 1582.
///
/// Every `Int64` millisecond value has a civil time (years about ±292 million), so nothing that prints a
/// stored time can trap on an absurd one.
public struct CivilTime: Equatable, Sendable {
    public var year: Int
    public var month: Int
    public var day: Int
    public var hour: Int
    public var minute: Int
    public var second: Int
    public var millisecond: Int
    /// 0 = Sunday … 6 = Saturday.
    public var weekday: Int
    /// Seconds east of UTC that were added.
    public var offsetSeconds: Int

    public static let weekdayNames = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
    public static let monthNames = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
                                    "October", "November", "December"]
    public static let millisecondsPerDay: Int64 = 86_400_000

    public init(milliseconds: Int64, offsetSeconds: Int = 0) {
        // Days first, then the offset inside the day: adding the offset to the milliseconds could overflow.
        var (days, msOfDay) = Self.floorDivide(milliseconds, Self.millisecondsPerDay)
        let (offsetDays, offsetMs) = Self.floorDivide(Int64(offsetSeconds) * 1000, Self.millisecondsPerDay)
        days += offsetDays
        msOfDay += offsetMs
        if msOfDay >= Self.millisecondsPerDay {
            msOfDay -= Self.millisecondsPerDay
            days += 1
        }
        let (year, month, day) = Self.civil(fromDays: days)
        self.year = year
        self.month = month
        self.day = day
        hour = Int(msOfDay / 3_600_000)
        minute = Int(msOfDay / 60_000 % 60)
        second = Int(msOfDay / 1000 % 60)
        millisecond = Int(msOfDay % 1000)
        // 1970-01-01 was a Thursday.
        weekday = Int(Self.floorDivide(days + 4, 7).1)
        self.offsetSeconds = offsetSeconds
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
    public static func days(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let shiftedMonth = Int64(month > 2 ? month - 3 : month + 9)
        let dayOfYear = (153 * shiftedMonth + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    public static func civil(fromDays days: Int64) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day))
    }

    public static func isLeapYear(_ year: Int) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    public static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Milliseconds of `days` since 1970 plus `msOfDay`, or nil when that is outside `Int64`.
    public static func milliseconds(days: Int64, msOfDay: Int64) -> Int64? {
        // Before 1970 the product alone can pass Int64.min although the sum does not: multiply one day less.
        let shift: Int64 = days < 0 ? 1 : 0
        let (product, overflow) = (days + shift).multipliedReportingOverflow(by: millisecondsPerDay)
        guard !overflow else { return nil }
        let (sum, overflowSum) = product.addingReportingOverflow(msOfDay - shift * millisecondsPerDay)
        return overflowSum ? nil : sum
    }

    public static func floorDivide(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        var quotient = value / divisor
        var remainder = value % divisor
        if remainder < 0 {
            quotient -= 1
            remainder += divisor
        }
        return (quotient, remainder)
    }

    // MARK: Text

    /// `2026-01-15`; years before 0 get a minus sign, years after 9999 more digits.
    public var dateText: String { "\(Self.pad(year, 4))-\(Self.pad(month))-\(Self.pad(day))" }
    /// `2026-01`
    public var monthText: String { "\(Self.pad(year, 4))-\(Self.pad(month))" }
    /// `13:05`
    public var minuteText: String { "\(Self.pad(hour)):\(Self.pad(minute))" }
    /// `13:05:09`
    public var secondText: String { "\(minuteText):\(Self.pad(second))" }
    /// `Thursday 15 January 2026`
    public var longDateText: String { "\(Self.weekdayNames[weekday]) \(day) \(Self.monthNames[month - 1]) \(year)" }

    /// `+01:00`, or `Z` for UTC.
    public var offsetText: String {
        if offsetSeconds == 0 { return "Z" }
        return offsetText(separator: ":")
    }

    /// RFC 3339 with milliseconds: `2026-01-15T13:05:09.120+01:00`. A year after 9999 is written with a
    /// `+` and more digits (ISO 8601's expanded years), so `Timestamp.parse` reads every value back.
    public var rfc3339: String {
        "\(year > 9999 ? "+" : "")\(dateText)T\(secondText).\(Self.pad(millisecond, 3))\(offsetText)"
    }

    /// RFC 5322 section 3.3: `Thu, 15 Jan 2026 13:05:09 +0100` (the text of `appendRFC5322`).
    public var rfc5322: String {
        var out: [UInt8] = []
        appendRFC5322(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// The C `asctime` shape of an mbox `From ` line: `Thu Jan 15 13:05:09 2026` (the text of `appendAsctime`).
    public var asctime: String {
        var out: [UInt8] = []
        appendAsctime(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// `rfc5322` as bytes, appended (an mbox or maildir export writes one per message).
    public func appendRFC5322(to out: inout [UInt8]) {
        let minutes = abs(offsetSeconds) / 60
        Self.appendName(Self.weekdayNames[weekday], to: &out)
        out.append(contentsOf: ", ".utf8)
        if day >= 10 { out.append(UInt8(truncatingIfNeeded: 0x30 + day / 10)) }
        out.append(UInt8(truncatingIfNeeded: 0x30 + day % 10))
        out.append(0x20)
        Self.appendName(Self.monthNames[month - 1], to: &out)
        out.append(0x20)
        Self.appendDigits(year, 4, to: &out)
        out.append(0x20)
        appendSecondText(to: &out)
        out.append(0x20)
        out.append(offsetSeconds < 0 ? 0x2D : 0x2B)
        Self.appendDigits(minutes / 60, 2, to: &out)
        Self.appendDigits(minutes % 60, 2, to: &out)
    }

    /// `asctime` as bytes, appended.
    public func appendAsctime(to out: inout [UInt8]) {
        Self.appendName(Self.weekdayNames[weekday], to: &out)
        out.append(0x20)
        Self.appendName(Self.monthNames[month - 1], to: &out)
        out.append(0x20)
        out.append(day >= 10 ? UInt8(truncatingIfNeeded: 0x30 + day / 10) : 0x20)
        out.append(UInt8(truncatingIfNeeded: 0x30 + day % 10))
        out.append(0x20)
        appendSecondText(to: &out)
        out.append(0x20)
        Self.appendDigits(year, 4, to: &out)
    }

    /// `13:05:09`, as `secondText`.
    private func appendSecondText(to out: inout [UInt8]) {
        Self.appendDigits(hour, 2, to: &out)
        out.append(0x3A)
        Self.appendDigits(minute, 2, to: &out)
        out.append(0x3A)
        Self.appendDigits(second, 2, to: &out)
    }

    /// The first three letters of a day's or month's (ASCII) name.
    private static func appendName(_ name: String, to out: inout [UInt8]) {
        out.append(contentsOf: name.utf8.prefix(3))
    }

    /// `value` as `pad` writes it: digits straight into `out` for 0 ≤ value < 10^width (every time of years
    /// 0…9999), else `pad`'s text (a sign, more digits).
    private static func appendDigits(_ value: Int, _ width: Int, to out: inout [UInt8]) {
        var divisor = 1
        for _ in 1..<width { divisor *= 10 }
        guard value >= 0 && value < divisor * 10 else { return out.append(contentsOf: pad(value, width).utf8) }
        while divisor > 0 {
            out.append(UInt8(truncatingIfNeeded: 0x30 + value / divisor % 10))
            divisor /= 10
        }
    }

    private func offsetText(separator: String) -> String {
        let sign = offsetSeconds < 0 ? "-" : "+"
        let minutes = abs(offsetSeconds) / 60
        return "\(sign)\(Self.pad(minutes / 60))\(separator)\(Self.pad(minutes % 60))"
    }

    public static func pad(_ value: Int, _ width: Int = 2) -> String {
        // Months, days, hours, minutes, seconds: from a table of small strings (every exported or printed
        // time makes five of them).
        if width == 2, value >= 0, value < 100 { return twoDigits[value] }
        let digits = String(value.magnitude)
        let padded = digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
        return value < 0 ? "-" + padded : padded
    }

    private static let twoDigits: [String] = (0..<100).map { $0 < 10 ? "0\($0)" : "\($0)" }
}
