#if canImport(Glibc)
import Glibc
#endif

/// The program's one date codec: UTC milliseconds since 1970 (how the archive, the engine and the notifier
/// keep time) to and from text.
///
/// Reads RFC 3339 and its XEP-0082 profile, `2026-01-15T12:00:00.123Z`: any offset (`+01:00`), an optional
/// fraction of any length (cut to milliseconds), `T`, `t` or a space between date and time, and ISO 8601's
/// expanded years (`+10000-01-01…`, `-0001-…`) that `rfc3339` writes for years outside 0000…9999, so every
/// `Int64` written is read back to the same value. Days are checked against their month (no 31 February),
/// and the calendar is proleptic Gregorian throughout. Pure Swift on bytes: no formatter, no locale.
public enum Timestamp {
    /// 1990-01-01T00:00:00Z: no XMPP message is older. Claimed times before it are not believed.
    public static let earliestPlausible: Int64 = 631_152_000_000

    /// UTC milliseconds of `text`, or nil when it is not such a time (or is outside `Int64`).
    public static func parse(_ text: some StringProtocol) -> Int64? {
        var text = String(text)
        return text.withUTF8 { parse(utf8: $0) }
    }

    public static func parse(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        var position = 0
        func number(_ digits: Int) -> Int? {
            guard position + digits <= bytes.count else { return nil }
            var value = 0
            for _ in 0..<digits {
                let byte = bytes[position]
                guard byte >= 0x30 && byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
                position += 1
            }
            return value
        }
        func expect(_ byte: UInt8, or other: UInt8? = nil, or third: UInt8? = nil) -> Bool {
            guard position < bytes.count, bytes[position] == byte || bytes[position] == other || bytes[position] == third else { return false }
            position += 1
            return true
        }
        // The year: four digits, or a sign and four to nine.
        var year: Int
        if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
            let negative = bytes[position] == UInt8(ascii: "-")
            position += 1
            let start = position
            while position < bytes.count, bytes[position] >= 0x30, bytes[position] <= 0x39, position - start < 10 { position += 1 }
            let count = position - start
            guard count >= 4 && count <= 9 else { return nil }
            year = 0
            for index in start..<position { year = year * 10 + Int(bytes[index] - 0x30) }
            if negative { year = -year }
        } else {
            guard let digits = number(4) else { return nil }
            year = digits
        }
        guard expect(UInt8(ascii: "-")), let month = number(2), expect(UInt8(ascii: "-")), let day = number(2),
              expect(UInt8(ascii: "T"), or: UInt8(ascii: "t"), or: UInt8(ascii: " ")),
              let hour = number(2), expect(UInt8(ascii: ":")), let minute = number(2), expect(UInt8(ascii: ":")),
              let second = number(2) else { return nil }
        guard (1...12).contains(month), day >= 1, day <= CivilTime.daysInMonth(year: year, month: month),
              hour < 24, minute < 60, second < 61 else { return nil }
        var millisecond = 0
        if expect(UInt8(ascii: ".")) {
            var scale = 100
            var digits = 0
            while position < bytes.count, bytes[position] >= 0x30 && bytes[position] <= 0x39 {
                millisecond += Int(bytes[position] - 0x30) * scale
                scale /= 10
                digits += 1
                position += 1
            }
            if digits == 0 { return nil }
        }
        var offsetSeconds = 0
        if expect(UInt8(ascii: "Z"), or: UInt8(ascii: "z")) {
            offsetSeconds = 0
        } else if position < bytes.count && (bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-")) {
            let negative = bytes[position] == UInt8(ascii: "-")
            position += 1
            guard let offsetHours = number(2), expect(UInt8(ascii: ":")), let offsetMinutes = number(2),
                  offsetHours < 24, offsetMinutes < 60 else { return nil }
            offsetSeconds = (offsetHours * 60 + offsetMinutes) * 60 * (negative ? -1 : 1)
        } else {
            return nil
        }
        guard position == bytes.count else { return nil }
        let days = CivilTime.days(year: year, month: month, day: day)
        let msOfDay = Int64(((hour * 60 + minute) * 60 + second) * 1000 + millisecond) - Int64(offsetSeconds) * 1000
        return CivilTime.milliseconds(days: days, msOfDay: msOfDay)
    }

    /// RFC 3339 in UTC with milliseconds: `2026-01-15T12:00:00.123Z` (the form of XEP-0082 and of every
    /// `--json` and jsonl time).
    public static func rfc3339(_ milliseconds: Int64) -> String {
        CivilTime(milliseconds: milliseconds).rfc3339
    }

    /// UTC milliseconds now.
    public static func now() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }
}
