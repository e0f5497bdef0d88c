import Foundation
import RoostCore

/// Escaping for HTML text and attribute values, the link targets the pages may contain, and the way back from
/// a message's (X)HTML to its text (Pidgin's logs).
package enum HTMLText {
    /// Escapes `& < > " '` so any text, including markup a contact typed, shows literally. Works on the UTF-8
    /// bytes: every byte it changes is ASCII.
    package static func escape(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "&") || $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: ">")
            || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "'") || $0 == 0 }) else { return text }
        var text = text
        return text.withUTF8 { bytes -> String in
            var result: [UInt8] = []
            result.reserveCapacity(bytes.count + 16)
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "&"): result += "&amp;".utf8
                case UInt8(ascii: "<"): result += "&lt;".utf8
                case UInt8(ascii: ">"): result += "&gt;".utf8
                case UInt8(ascii: "\""): result += "&quot;".utf8
                case UInt8(ascii: "'"): result += "&#39;".utf8
                case 0: result += "\u{FFFD}".utf8
                default: result.append(byte)
                }
            }
            return String(decoding: result, as: UTF8.self)
        }
    }

    /// A name another party chose (sender, file name, title, nick, subject), escaped for HTML after its hidden
    /// characters are made visible (`VisibleText.name`: a right-to-left override is shown, not obeyed).
    package static func name(_ text: String) -> String {
        escape(VisibleText.name(text))
    }

    /// The text of an (X)HTML fragment: line breaks for `<br>`, other tags dropped (a link shows its text),
    /// character references decoded.
    static func plainText(_ markup: String) -> String {
        var result = ""
        var rest = Substring(markup)
        while let open = rest.firstIndex(where: { $0 == "<" || $0 == "&" }) {
            result += rest[..<open]
            rest = rest[open...]
            if rest.first == "<" {
                guard let close = rest.firstIndex(of: ">") else { break }
                let tag = rest[rest.index(after: rest.startIndex)..<close].lowercased()
                if tag == "br" || tag.hasPrefix("br ") || tag.hasPrefix("br/") { result += "\n" }
                rest = rest[rest.index(after: close)...]
            } else {
                guard let semicolon = rest.prefix(12).firstIndex(of: ";"),
                      let decoded = character(rest[rest.index(after: rest.startIndex)..<semicolon]) else {
                    result += "&"
                    rest = rest.dropFirst()
                    continue
                }
                result.unicodeScalars.append(decoded)
                rest = rest[rest.index(after: semicolon)...]
            }
        }
        result += rest
        return result
    }

    private static func character(_ name: Substring) -> Unicode.Scalar? {
        switch name {
        case "amp": return "&"
        case "lt": return "<"
        case "gt": return ">"
        case "quot": return "\""
        case "apos": return "'"
        case "nbsp": return "\u{A0}"
        default:
            guard name.first == "#" else { return nil }
            let digits = name.dropFirst()
            let value = digits.first == "x" || digits.first == "X" ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits)
            return value.flatMap(Unicode.Scalar.init)
        }
    }

    /// Only web and XMPP addresses become links (never `javascript:` or `data:`); relative paths of copied
    /// files are the caller's own.
    static func isSafeExternalURL(_ url: String) -> Bool {
        let lower = url.lowercased()
        return lower.hasPrefix("https://") || lower.hasPrefix("http://") || lower.hasPrefix("xmpp:")
    }

    /// A relative link to a file in the export: each path segment percent-encoded.
    static func relativeLink(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false).map { segment -> String in
            if segment == ".." { return ".." }
            return segment.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/", "?", "#", ";"])) ?? String(segment)
        }.joined(separator: "/")
    }

    /// The page's initial-letter avatar colour: a hue from the JID so a contact keeps its colour.
    static func hue(_ text: String) -> Int {
        var value: UInt32 = 2_166_136_261
        for byte in text.lowercased().utf8 {
            value ^= UInt32(byte)
            value = value &* 16_777_619
        }
        return Int(value % 360)
    }

    static func initial(_ name: String) -> String {
        name.first { $0.isLetter || $0.isNumber }.map { String($0).uppercased() } ?? "?"
    }
}
