import Foundation

/// Escaping for HTML text and attribute values, and the link targets the pages may contain.
enum HTMLText {
    /// Escapes `& < > " '` so any text, including markup a contact typed, shows literally.
    static func escape(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            case "\u{0}": result += "\u{FFFD}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
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
