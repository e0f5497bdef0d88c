/// JSON serialization, written out so escaping is exactly what RFC 8259 requires and nothing is reordered.
enum JSONText {
    static func append(_ value: JSONValue, to text: inout String) {
        switch value {
        case .null: text += "null"
        case let .bool(flag): text += flag ? "true" : "false"
        case let .int(number): text += String(number)
        case let .double(number):
            // JSON has no NaN or infinity.
            text += number.isFinite ? "\(number)" : "null"
        case let .string(string): appendString(string, to: &text)
        case let .array(elements):
            text += "["
            for (position, element) in elements.enumerated() {
                if position > 0 { text += "," }
                append(element, to: &text)
            }
            text += "]"
        case let .object(object):
            text += "{"
            for (position, member) in object.members.enumerated() {
                if position > 0 { text += "," }
                appendString(member.key, to: &text)
                text += ":"
                append(member.value, to: &text)
            }
            text += "}"
        }
    }

    /// Quotes and escapes a string. Non-ASCII stays as UTF-8; U+2028/U+2029 are escaped too because
    /// JavaScript before ES2019 treats them as line ends, which would break a JSON line read by JS tools.
    static func appendString(_ string: String, to text: inout String) {
        text += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case "\u{08}": text += "\\b"
            case "\u{0C}": text += "\\f"
            case "\u{2028}", "\u{2029}", "\u{7F}":
                text += "\\u" + hex4(scalar.value)
            case _ where scalar.value < 0x20:
                text += "\\u" + hex4(scalar.value)
            default:
                text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }

    private static func hex4(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 4 - digits.count) + digits
    }
}
