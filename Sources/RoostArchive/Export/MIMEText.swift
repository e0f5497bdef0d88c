import Foundation

/// The encodings a mail message needs to carry chat text in any language through mail tools: quoted-printable
/// bodies (RFC 2045) and encoded-word headers (RFC 2047).
enum MIMEText {
    private static let hex: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// Quoted-printable with LF line ends, lines at most 76 characters, trailing spaces encoded, and a line
    /// matching `>*From ` written with its first character encoded (`=46rom `, `=3EFrom `): then no line of
    /// an mbox matches what mboxo or mboxrd readers quote or unquote, and every reader gets the exact text.
    static func quotedPrintable(_ text: String) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count + text.utf8.count / 8)
        let lines = text.replacingOccurrences(of: "\r\n", with: "\n").split(separator: "\n", omittingEmptySubsequences: false)
        for (lineIndex, line) in lines.enumerated() {
            if lineIndex > 0 { output.append(0x0A) }
            let bytes = Array(line.utf8)
            var column = 0
            for (index, byte) in bytes.enumerated() {
                let isLast = index == bytes.count - 1
                let mustEncode = byte == UInt8(ascii: "=") || byte > 126 || (byte < 32 && byte != 9)
                    || ((byte == 32 || byte == 9) && isLast)
                var encoded = mustEncode ? escaped(byte) : [byte]
                // Leave room for the soft break "=" unless this is the line's last byte.
                if column + encoded.count > (isLast ? 76 : 75) {
                    output.append(contentsOf: [UInt8(ascii: "="), 0x0A])
                    column = 0
                }
                // Whatever starts an output line (after a hard or a soft break) must not read as a separator.
                if column == 0 && !mustEncode && (byte == UInt8(ascii: ".") || startsFromLine(bytes[index...])) {
                    encoded = escaped(byte)
                }
                output.append(contentsOf: encoded)
                column += encoded.count
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static func escaped(_ byte: UInt8) -> [UInt8] {
        [UInt8(ascii: "="), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
    }

    private static func startsFromLine(_ bytes: ArraySlice<UInt8>) -> Bool {
        bytes.drop { $0 == UInt8(ascii: ">") }.starts(with: "From ".utf8)
    }

    /// A header value: as is when printable ASCII, else RFC 2047 `=?UTF-8?B?…?=` words of at most 75
    /// characters, never splitting a character, folded onto continuation lines.
    static func headerText(_ text: String) -> String {
        let flattened = text.replacingOccurrences(of: "\r", with: " ").replacingOccurrences(of: "\n", with: " ")
        if flattened.utf8.allSatisfy({ $0 >= 32 && $0 < 127 }) && !flattened.contains("=?") { return flattened }
        return encodedWords(flattened)
    }

    static func encodedWords(_ text: String) -> String {
        var words: [String] = []
        var chunk: [UInt8] = []
        for character in text {
            let bytes = Array(String(character).utf8)
            if chunk.count + bytes.count > 45 {
                words.append(word(chunk))
                chunk = []
            }
            chunk += bytes
        }
        if !chunk.isEmpty || words.isEmpty { words.append(word(chunk)) }
        return words.joined(separator: "\n ")
    }

    private static func word(_ bytes: [UInt8]) -> String {
        "=?UTF-8?B?" + Data(bytes).base64EncodedString() + "?="
    }

    /// `"Display Name" <address>` with the name quoted (ASCII) or encoded (anything else).
    static func mailbox(name: String?, address: String) -> String {
        guard let name, !name.isEmpty, name != address else { return "<\(address)>" }
        let clean = name.replacingOccurrences(of: "\r", with: " ").replacingOccurrences(of: "\n", with: " ")
        if clean.utf8.allSatisfy({ $0 >= 32 && $0 < 127 }) && !clean.contains("=?") {
            let quoted = clean.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            return "\"\(quoted)\" <\(address)>"
        }
        return encodedWords(clean) + " <\(address)>"
    }
}
