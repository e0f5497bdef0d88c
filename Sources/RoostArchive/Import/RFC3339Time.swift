/// Reads the times a jsonl export writes: RFC 3339 (`2026-01-15T12:00:00.000Z`, any offset, optional
/// fraction) or a plain number of UTC milliseconds.
enum RFC3339Time {
    static func milliseconds(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
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
        func expect(_ characters: String) -> Bool {
            guard position < bytes.count, characters.utf8.contains(bytes[position]) else { return false }
            position += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2), expect("Tt "),
              let hour = number(2), expect(":"), let minute = number(2), expect(":"), let second = number(2) else { return nil }
        guard (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        var millisecond = 0
        if position < bytes.count && bytes[position] == UInt8(ascii: ".") {
            position += 1
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
        var offset = 0
        if expect("Zz") {
            offset = 0
        } else if position < bytes.count && (bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-")) {
            let negative = bytes[position] == UInt8(ascii: "-")
            position += 1
            guard let offsetHours = number(2), expect(":"), let offsetMinutes = number(2) else { return nil }
            offset = (offsetHours * 60 + offsetMinutes) * 60 * (negative ? -1 : 1)
        } else {
            return nil
        }
        guard position == bytes.count else { return nil }
        let days = CivilTime.days(year: year, month: month, day: day)
        let seconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offset)
        return seconds * 1000 + Int64(millisecond)
    }
}
