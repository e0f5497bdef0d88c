import RoostCore

internal import CSQLite

/// Writes JSON straight into a `ByteSink`, escaping at the byte level (RFC 8259, the same escapes as
/// `roost search --json`: control characters, quote, backslash, DEL, and U+2028/U+2029 for JavaScript).
/// Building Swift strings per field would cost more than the database read.
struct JSONByteEncoder {
    let sink: ByteSink
    private var needsComma = false

    init(sink: ByteSink) {
        self.sink = sink
    }

    mutating func beginObject() {
        sink.append(UInt8(ascii: "{"))
        needsComma = false
    }

    mutating func endObject() {
        sink.append(UInt8(ascii: "}"))
        needsComma = true
    }

    mutating func beginArray(_ key: StaticString) {
        self.key(key)
        sink.append(UInt8(ascii: "["))
        needsComma = false
    }

    mutating func endArray() {
        sink.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// Before an array element that is an object.
    mutating func element() {
        if needsComma { sink.append(UInt8(ascii: ",")) }
        needsComma = false
    }

    /// `key` is written as given: plain ASCII without characters that need escaping.
    mutating func key(_ key: StaticString) {
        if needsComma { sink.append(UInt8(ascii: ",")) }
        sink.append(UInt8(ascii: "\""))
        sink.append(UnsafeRawBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
        sink.append(UInt8(ascii: "\""))
        sink.append(UInt8(ascii: ":"))
        needsComma = true
    }

    mutating func field(_ key: StaticString, _ value: String?) {
        self.key(key)
        if let value { Self.appendString(value, to: sink) } else { appendNull() }
    }

    /// A text column of the current row, copied from SQLite's buffer without making a Swift string.
    mutating func textColumn(_ key: StaticString, _ row: Statement.Row, _ column: Int32) {
        self.key(key)
        let handle = row.statement.handle
        guard let text = sqlite3_column_text(handle, column) else { return appendNull() }
        let count = Int(sqlite3_column_bytes(handle, column))
        Self.appendString(bytes: UnsafeBufferPointer(start: text, count: count), to: sink)
    }

    mutating func field(_ key: StaticString, _ value: Int64?) {
        self.key(key)
        if let value { appendInteger(value) } else { appendNull() }
    }

    mutating func field(_ key: StaticString, _ value: Bool) {
        self.key(key)
        if value {
            sink.append(UnsafeRawBufferPointer(start: ("true" as StaticString).utf8Start, count: 4))
        } else {
            sink.append(UnsafeRawBufferPointer(start: ("false" as StaticString).utf8Start, count: 5))
        }
    }

    /// An RFC 3339 UTC time with milliseconds, or the plain number of milliseconds outside years 0–9999.
    mutating func timeField(_ key: StaticString, _ milliseconds: Int64?) {
        self.key(key)
        guard let milliseconds else { return appendNull() }
        let time = CivilTime(milliseconds: milliseconds)
        guard (0...9999).contains(time.year) else { return appendInteger(milliseconds) }
        sink.append(UInt8(ascii: "\""))
        appendDigits(time.year, 4)
        sink.append(UInt8(ascii: "-"))
        appendDigits(time.month, 2)
        sink.append(UInt8(ascii: "-"))
        appendDigits(time.day, 2)
        sink.append(UInt8(ascii: "T"))
        appendDigits(time.hour, 2)
        sink.append(UInt8(ascii: ":"))
        appendDigits(time.minute, 2)
        sink.append(UInt8(ascii: ":"))
        appendDigits(time.second, 2)
        sink.append(UInt8(ascii: "."))
        appendDigits(time.millisecond, 3)
        sink.append(UInt8(ascii: "Z"))
        sink.append(UInt8(ascii: "\""))
    }

    mutating func stringArray(_ key: StaticString, _ values: [String]) {
        self.key(key)
        sink.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { sink.append(UInt8(ascii: ",")) }
            Self.appendString(value, to: sink)
        }
        sink.append(UInt8(ascii: "]"))
    }

    mutating func newline() {
        sink.append(UInt8(ascii: "\n"))
        needsComma = false
    }

    /// A null value, after `key`.
    func appendNull() {
        sink.append(UnsafeRawBufferPointer(start: ("null" as StaticString).utf8Start, count: 4))
    }

    private func appendInteger(_ value: Int64) {
        if value >= 0 && value < 10 {
            sink.append(UInt8(ascii: "0") + UInt8(value))
        } else {
            sink.append(String(value))
        }
    }

    private func appendDigits(_ value: Int, _ width: Int) {
        var divisor = 1
        for _ in 1..<width { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            sink.append(UInt8(ascii: "0") + UInt8(rest / divisor % 10))
            rest %= divisor
            divisor /= 10
        }
    }

    static func appendString(_ value: String, to sink: ByteSink) {
        var value = value
        value.withUTF8 { appendString(bytes: $0, to: sink) }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    static func appendString(bytes: UnsafeBufferPointer<UInt8>, to sink: ByteSink) {
        sink.append(UInt8(ascii: "\""))
        guard let base = bytes.baseAddress else { return sink.append(UInt8(ascii: "\"")) }
        let count = bytes.count
        var start = 0
        var index = 0
        while index < count {
            let byte = base[index]
            var escape: UInt8 = 0
            var width = 1
            switch byte {
            case 0x22: escape = UInt8(ascii: "\"")
            case 0x5C: escape = UInt8(ascii: "\\")
            case 0x0A: escape = UInt8(ascii: "n")
            case 0x0D: escape = UInt8(ascii: "r")
            case 0x09: escape = UInt8(ascii: "t")
            case 0x08: escape = UInt8(ascii: "b")
            case 0x0C: escape = UInt8(ascii: "f")
            case 0x00..<0x20, 0x7F: escape = UInt8(ascii: "u")
            case 0xE2 where index + 2 < count && base[index + 1] == 0x80 && (base[index + 2] == 0xA8 || base[index + 2] == 0xA9):
                escape = UInt8(ascii: "u")
                width = 3
            default:
                index += 1
                continue
            }
            if index > start { sink.append(UnsafeRawBufferPointer(start: base + start, count: index - start)) }
            sink.append(UInt8(ascii: "\\"))
            sink.append(escape)
            if escape == UInt8(ascii: "u") {
                let scalar: UInt32 = width == 3 ? (base[index + 2] == 0xA8 ? 0x2028 : 0x2029) : UInt32(byte)
                for shift in [12, 8, 4, 0] { sink.append(hexDigits[Int((scalar >> UInt32(shift)) & 0xF)]) }
            }
            index += width
            start = index
        }
        if count > start { sink.append(UnsafeRawBufferPointer(start: base + start, count: count - start)) }
        sink.append(UInt8(ascii: "\""))
    }
}
