/// Escaping for CommonMark text: every character that could start markup is backslash-escaped (CommonMark
/// allows a backslash before any ASCII punctuation), and line starts that would become lists, headings,
/// quotes or thematic breaks are neutralised.
enum MarkdownText {
    /// Works on the UTF-8 bytes, by Unicode scalar (CommonMark reads code points: a `*` followed by a combining
    /// mark is still emphasis), so that the common case costs no Unicode property lookups (they were 14 % of an
    /// export). Lines are split at LF.
    static func escape(_ text: String) -> String {
        var text = text
        return text.withUTF8 { bytes -> String in
            var output: [UInt8] = []
            output.reserveCapacity(bytes.count + bytes.count / 8)
            var atStart = true
            var digitsSoFar = true
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                if byte == 0x0A {
                    output.append(byte)
                    atStart = true
                    digitsSoFar = true
                    index += 1
                    continue
                }
                if byte >= 0x80 {
                    // Only a line's leading run needs to know whether a non-ASCII scalar is white space.
                    let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
                    let end = min(index + length, bytes.count)
                    if atStart, let scalar = String(decoding: bytes[index..<end], as: UTF8.self).unicodeScalars.first,
                       !scalar.properties.isWhitespace {
                        atStart = false
                    }
                    digitsSoFar = false
                    output.append(contentsOf: bytes[index..<end])
                    index = end
                    continue
                }
                let isDigit = byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
                if special[Int(byte)] {
                    output.append(UInt8(ascii: "\\"))
                } else if atStart && (byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "=")) {
                    output.append(UInt8(ascii: "\\"))
                } else if digitsSoFar && index > 0 && bytes[index - 1] != 0x0A && (byte == UInt8(ascii: ".") || byte == UInt8(ascii: ")")) {
                    output.append(UInt8(ascii: "\\"))
                }
                if !(byte == 0x20 || (byte >= 0x09 && byte <= 0x0D)) { atStart = false }
                if !isDigit { digitsSoFar = false }
                output.append(byte)
                index += 1
            }
            return String(decoding: output, as: UTF8.self)
        }
    }

    /// The ASCII characters that could start markup, by byte value.
    private static let special: [Bool] = (0..<128).map { Array("\\`*_[]<>#|~&{}$".utf8).contains(UInt8($0)) }

    /// A link target: angle brackets allow spaces; `<`, `>` and newlines are percent-encoded.
    static func destination(_ url: String) -> String {
        var result = "<"
        for character in url {
            switch character {
            case "<": result += "%3C"
            case ">": result += "%3E"
            case "\n", "\r": result += "%0A"
            case "\\": result += "%5C"
            default: result.append(character)
            }
        }
        return result + ">"
    }
}
