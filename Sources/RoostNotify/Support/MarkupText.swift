import Foundation

/// Text helpers for notification bodies.
enum MarkupText {
    /// Escapes for servers advertising `body-markup`, whose bodies are a small subset of HTML/XML.
    static func escape(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&apos;"
            default: result.append(character)
            }
        }
        return result
    }

    /// At most `limit` characters and 6 lines, cut at a word boundary when one is near, with an ellipsis.
    static func truncate(_ text: String, limit: Int) -> String {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        var cut = false
        if lines.count > 6 {
            lines = Array(lines.prefix(6))
            cut = true
        }
        var joined = lines.joined(separator: "\n")
        if joined.count > limit {
            var prefix = String(joined.prefix(limit))
            if let space = prefix.lastIndex(where: \.isWhitespace), prefix.distance(from: space, to: prefix.endIndex) < 20 {
                prefix = String(prefix[..<space])
            }
            joined = prefix
            cut = true
        }
        return cut ? joined.trimmingCharacters(in: .whitespacesAndNewlines) + "…" : joined
    }
}
