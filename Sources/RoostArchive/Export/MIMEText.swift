import Foundation

/// The encodings a mail message needs to carry chat text in any language through mail tools: quoted-printable
/// bodies (RFC 2045) and encoded-word headers (RFC 2047).
enum MIMEText {
    private static let hex: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// Quoted-printable with LF line ends, lines at most 76 characters, trailing spaces encoded, and a line
    /// matching `>*From ` written with its first character encoded (`=46rom `, `=3EFrom `): then no line of
    /// an mbox matches what mboxo or mboxrd readers quote or unquote, and every reader gets the exact text.
    /// Works on the UTF-8 bytes, CRLF read as LF (Foundation's replacement and per-Character splitting here were
    /// a third of an mbox export). Appended to `output`: a mail message is built as bytes.
    static func appendQuotedPrintable(_ text: String, to output: inout [UInt8]) {
        var text = text
        text.withUTF8 { source in
            output.reserveCapacity(output.count + source.count + source.count / 8)
            var lineStart = 0
            while true {
                let newline = source[lineStart...].firstIndex(of: 0x0A)
                var end = newline ?? source.count
                if newline != nil && end > lineStart && source[end - 1] == 0x0D { end -= 1 }
                if lineStart > 0 { output.append(0x0A) }
                encodeLine(UnsafeBufferPointer(rebasing: source[lineStart..<end]), into: &output)
                guard let newline else { break }
                lineStart = newline + 1
            }
        }
    }

    private static func encodeLine(_ bytes: UnsafeBufferPointer<UInt8>, into output: inout [UInt8]) {
        var column = 0
        for index in 0..<bytes.count {
            let byte = bytes[index]
            let isLast = index == bytes.count - 1
            let mustEncode = byte == UInt8(ascii: "=") || byte > 126 || (byte < 32 && byte != 9)
                || ((byte == 32 || byte == 9) && isLast)
            // Leave room for the soft break "=" unless this is the line's last byte.
            if column + (mustEncode ? 3 : 1) > (isLast ? 76 : 75) {
                output.append(UInt8(ascii: "="))
                output.append(0x0A)
                column = 0
            }
            // Whatever starts an output line (after a hard or a soft break) must not read as a separator.
            let encode = mustEncode
                || (column == 0 && (byte == UInt8(ascii: ".") || startsFromLine(UnsafeBufferPointer(rebasing: bytes[index...]))))
            if encode {
                output.append(UInt8(ascii: "="))
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0xF)])
                column += 3
            } else {
                output.append(byte)
                column += 1
            }
        }
    }

    private static func startsFromLine(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.drop { $0 == UInt8(ascii: ">") }.starts(with: "From ".utf8)
    }

    /// A header value: as is when printable ASCII, else RFC 2047 `=?UTF-8?B?…?=` words of at most 75
    /// characters, never splitting a character, folded onto continuation lines.
    static func headerText(_ text: String) -> String {
        var out: [UInt8] = []
        appendHeaderText(text, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// `headerText(text)` appended to `output` (a mail message is built as bytes): printable ASCII as it is.
    static func appendHeaderText(_ text: String, to output: inout [UInt8]) {
        let flattened = flattened(text)
        if isPlainASCII(flattened) { return output.append(contentsOf: flattened.utf8) }
        output.append(contentsOf: encodedWords(flattened).utf8)
    }

    /// CR and LF as spaces: a header value is one line.
    private static func flattened(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A }) else { return text }
        return String(decoding: text.utf8.map { $0 == 0x0D || $0 == 0x0A ? 0x20 : $0 }, as: UTF8.self)
    }

    /// Printable ASCII that does not look like an encoded word (`=?`).
    static func isPlainASCII(_ text: String) -> Bool {
        var previous: UInt8 = 0
        for byte in text.utf8 {
            if byte < 32 || byte >= 127 || (previous == UInt8(ascii: "=") && byte == UInt8(ascii: "?")) { return false }
            previous = byte
        }
        return true
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
        var out: [UInt8] = []
        appendMailbox(name: name, address: address, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// `mailbox(name:address:)` appended to `output`.
    static func appendMailbox(name: String?, address: String, to output: inout [UInt8]) {
        if let name, !name.isEmpty, name != address {
            let clean = flattened(name)
            if isPlainASCII(clean) {
                output.append(UInt8(ascii: "\""))
                for byte in clean.utf8 {
                    if byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "\"") { output.append(UInt8(ascii: "\\")) }
                    output.append(byte)
                }
                output.append(contentsOf: "\" ".utf8)
            } else {
                output.append(contentsOf: encodedWords(clean).utf8)
                output.append(0x20)
            }
        }
        output.append(UInt8(ascii: "<"))
        output.append(contentsOf: address.utf8)
        output.append(UInt8(ascii: ">"))
    }
}
