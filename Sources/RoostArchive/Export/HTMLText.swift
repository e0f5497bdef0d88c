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

    /// A link to an address outside the pages (`isSafeExternalURL` must hold): it tells the site nothing of the
    /// page it came from, gives it no handle on the page, and a web address opens in a tab of its own.
    /// `label` is HTML (already escaped).
    package static func externalLink(_ url: String, label: String, attributes: String = "") -> String {
        let tab = url.utf8.first.map { $0 == UInt8(ascii: "h") || $0 == UInt8(ascii: "H") } == true ? " target=\"_blank\"" : ""
        return "<a\(attributes) href=\"\(escape(url))\" rel=\"noopener noreferrer\"\(tab)>\(label)</a>"
    }

    /// `text` escaped, with the web and XMPP addresses in it as links (`externalLink`) and `marks` (sorted,
    /// disjoint ranges of `text`: a search's matches) in `<mark>`; a mark that crosses a link's edge is split there.
    /// Message text of the pages goes through here: `roost export --format html` and `roost serve` alike.
    package static func linkified(_ text: String, marks: [Range<String.Index>] = []) -> String {
        let links = linkRanges(in: text)
        guard !links.isEmpty || !marks.isEmpty else { return escape(text) }
        let scalars = text.unicodeScalars
        func marked(_ from: String.Index, _ to: String.Index) -> String {
            var html = ""
            var position = from
            for mark in marks where mark.upperBound > from && mark.lowerBound < to {
                let start = max(mark.lowerBound, position), end = min(mark.upperBound, to)
                if start > position { html += escape(String(scalars[position..<start])) }
                if end > start { html += "<mark>" + escape(String(scalars[start..<end])) + "</mark>" }
                position = max(position, end)
            }
            if position < to { html += escape(String(scalars[position..<to])) }
            return html
        }
        var html = ""
        var cursor = scalars.startIndex
        for link in links {
            html += marked(cursor, link.lowerBound)
            html += externalLink(String(scalars[link]), label: marked(link.lowerBound, link.upperBound))
            cursor = link.upperBound
        }
        return html + marked(cursor, scalars.endIndex)
    }

    /// Where `text` holds a web (`http://`, `https://`) or XMPP (`xmpp:`) address, as people write them in
    /// messages: from the scheme (not inside a word) up to a space, a control or invisible character, a quote, an
    /// angle bracket or a backtick (so an address can never carry markup or leave its attribute), without the
    /// punctuation that ends a sentence or closes a parenthesis opened before the address. Ranges of unicode
    /// scalars, in order. Written here because Foundation on Linux has no `NSDataDetector` and no Debian library
    /// finds addresses in text for this use (they are HTML sanitizers or full URL parsers, which take an address
    /// as given, not out of a sentence).
    static func linkRanges(in text: String) -> [Range<String.Index>] {
        // Most messages hold no address: one pass over the bytes says so.
        guard text.utf8.contains(UInt8(ascii: ":")) else { return [] }
        let scalars = text.unicodeScalars
        var ranges: [Range<String.Index>] = []
        var index = scalars.startIndex
        var previous: Unicode.Scalar?
        while index < scalars.endIndex {
            let scalar = scalars[index]
            if scalar == "h" || scalar == "H" || scalar == "x" || scalar == "X", !continuesWord(previous),
               let start = afterScheme(scalars, at: index) {
                var end = start.content
                while end < scalars.endIndex, mayBeInAddress(scalars[end]) { end = scalars.index(after: end) }
                end = trimmed(scalars, from: index, to: end)
                var first = start.content
                // A web address needs a host: something other than another slash right after `//`.
                if start.web, first < end, scalars[first] == "/" { first = end }
                if first < end {
                    ranges.append(index..<end)
                    previous = scalars[scalars.index(before: end)]
                    index = end
                    continue
                }
            }
            previous = scalar
            index = scalars.index(after: index)
        }
        return ranges
    }

    /// A scheme glued to a word before it (`xhttp://`, `a+xmpp:`) is not an address of its own.
    private static func continuesWord(_ scalar: Unicode.Scalar?) -> Bool {
        guard let scalar else { return false }
        return scalar.properties.isAlphabetic || scalar.properties.numericType != nil || scalar == "+" || scalar == "-" || scalar == "."
    }

    /// Where the address after a scheme at `index` starts, and whether it is a web address.
    private static func afterScheme(_ scalars: String.UnicodeScalarView, at index: String.Index) -> (content: String.Index, web: Bool)? {
        for (scheme, web) in [("https://", true), ("http://", true), ("xmpp:", false)] {
            var position = index
            var matched = true
            for expected in scheme.unicodeScalars {
                guard position < scalars.endIndex, scalars[position].properties.lowercaseMapping == String(expected) else {
                    matched = false
                    break
                }
                position = scalars.index(after: position)
            }
            if matched { return (position, web) }
        }
        return nil
    }

    private static func mayBeInAddress(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "\"", "'", "<", ">", "`", "\\": return false
        default: break
        }
        if scalar.properties.isWhitespace { return false }
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned: return false
        default: return true
        }
    }

    /// The address without the punctuation after it: `.,:;!?*_~` at its end, and a closing bracket it did not open.
    private static func trimmed(_ scalars: String.UnicodeScalarView, from start: String.Index, to end: String.Index) -> String.Index {
        var end = end
        while end > start {
            let last = scalars[scalars.index(before: end)]
            let opening: Unicode.Scalar? = last == ")" ? "(" : last == "]" ? "[" : last == "}" ? "{" : nil
            if let opening {
                var depth = 0
                for scalar in scalars[start..<end] {
                    if scalar == opening { depth += 1 } else if scalar == last { depth -= 1 }
                }
                guard depth < 0 else { break }
            } else if !".,:;!?*_~".unicodeScalars.contains(last) {
                break
            }
            end = scalars.index(before: end)
        }
        return end
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
