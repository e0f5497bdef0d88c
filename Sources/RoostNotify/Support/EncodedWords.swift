import Foundation

/// RFC 2047 encoded words, for non-ASCII text in mail headers (and ntfy's Title header, which accepts them).
enum EncodedWords {
    /// Text that may appear in a header as is: printable ASCII only.
    static func isPlainASCII(_ text: String) -> Bool {
        text.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
    }

    /// `=?UTF-8?B?...?=` words of at most 75 characters, never splitting a character, separated by
    /// folding whitespace (CRLF SP) so long headers stay within the line limit.
    static func encode(_ text: String) -> String {
        var words: [String] = []
        var chunk = Data()
        for character in text {
            let bytes = Data(String(character).utf8)
            if chunk.count + bytes.count > 45, !chunk.isEmpty {
                words.append(word(chunk))
                chunk = Data()
            }
            chunk.append(bytes)
        }
        if !chunk.isEmpty || words.isEmpty { words.append(word(chunk)) }
        return words.joined(separator: "\r\n ")
    }

    /// As is when plain ASCII and short, otherwise encoded.
    static func header(_ text: String) -> String {
        isPlainASCII(text) && text.count <= 70 ? text : encode(text)
    }

    /// A display name for From/To: a quoted string when ASCII, else encoded words.
    static func displayName(_ name: String) -> String {
        let flat = name.replacingOccurrences(of: "\r", with: " ").replacingOccurrences(of: "\n", with: " ")
        if isPlainASCII(flat) && flat.count <= 60 {
            return "\"" + flat.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        return encode(flat)
    }

    private static func word(_ bytes: Data) -> String {
        "=?UTF-8?B?" + bytes.base64EncodedString() + "?="
    }
}
