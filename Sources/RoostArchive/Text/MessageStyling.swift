import RoostCore

/// XEP-0393 Message Styling: `*strong*`, `_emphasis_`, `~strike~`, `` `code` ``, ```` ``` ```` preformatted blocks
/// and `>` quotes, parsed for display. The stored body stays verbatim and so does what is shown: the directives
/// remain part of the text (as the XEP recommends), only wrapped in the matching style. Written here because
/// no Debian library parses XEP-0393 (it is not Markdown: no links, no headings, different span rules).
public enum MessageStyling {
    public enum Style: Sendable, Equatable {
        case strong, emphasis, strike, code
    }

    public indirect enum Span: Sendable, Equatable {
        case text(String)
        /// The text inside includes its opening and closing directives.
        case styled(Style, [Span])
    }

    public indirect enum Block: Sendable, Equatable {
        /// One line of text with its spans.
        case line([Span])
        /// A ```` ``` ```` block: its lines (the fence lines included), unstyled.
        case preformatted([String])
        /// `>` lines; each block inside is the quoted text with the `>` (and one space) removed.
        case quote(prefixes: [String], [Block])
    }

    public static func blocks(_ text: String) -> [Block] {
        blocks(lines: text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
    }

    static func blocks(lines: [String]) -> [Block] {
        var blocks: [Block] = []
        var index = 0
        while index < lines.count {
            let line = lines[index]
            if line.hasPrefix("```") {
                // Up to the closing fence, or the end of the message (an unclosed block runs to the end).
                var end = index + 1
                while end < lines.count && lines[end] != "```" { end += 1 }
                blocks.append(.preformatted(Array(lines[index...min(end, lines.count - 1)])))
                index = end + 1
            } else if line.hasPrefix(">") {
                var prefixes: [String] = []
                var inner: [String] = []
                while index < lines.count && lines[index].hasPrefix(">") {
                    var rest = lines[index].dropFirst()
                    var prefix = ">"
                    if rest.first == " " { rest = rest.dropFirst(); prefix = "> " }
                    prefixes.append(prefix)
                    inner.append(String(rest))
                    index += 1
                }
                blocks.append(.quote(prefixes: prefixes, Self.blocks(lines: inner)))
            } else {
                blocks.append(.line(spans(Array(line))))
                index += 1
            }
        }
        return blocks
    }

    private static func style(of character: Character) -> Style? {
        switch character {
        case "*": .strong
        case "_": .emphasis
        case "~": .strike
        case "`": .code
        default: nil
        }
    }

    /// Spans of one line: an opening directive at the start, after whitespace or after another opening directive,
    /// not followed by whitespace; closed by the first same directive on the line that follows a non-whitespace
    /// character and encloses some text. Code spans hold no further styling.
    static func spans(_ characters: [Character]) -> [Span] {
        var result: [Span] = []
        var plain = ""
        var index = 0
        func flush() {
            if !plain.isEmpty { result.append(.text(plain)) }
            plain = ""
        }
        while index < characters.count {
            let character = characters[index]
            let before: Character? = index > 0 ? characters[index - 1] : nil
            if let style = style(of: character), before == nil || before!.isWhitespace || Self.style(of: before!) != nil,
               index + 1 < characters.count, !characters[index + 1].isWhitespace,
               let close = closing(character, in: characters, after: index) {
                flush()
                let inner = Array(characters[(index + 1)..<close])
                let content: [Span] = style == .code ? [.text(String(inner))] : spans(inner)
                result.append(.styled(style, [.text(String(character))] + content + [.text(String(character))]))
                index = close + 1
            } else {
                plain.append(character)
                index += 1
            }
        }
        flush()
        return result
    }

    private static func closing(_ directive: Character, in characters: [Character], after open: Int) -> Int? {
        var index = open + 2
        while index < characters.count {
            if characters[index] == directive, !characters[index - 1].isWhitespace { return index }
            index += 1
        }
        return nil
    }

    /// The message as HTML: strong/em/s/code elements around spans, `<pre>` and `<blockquote>` blocks, lines
    /// separated by newlines (the text is shown with `white-space: pre-wrap`). `escape` escapes text for HTML.
    public static func html(_ text: String, escape: (String) -> String) -> String {
        // No directive character and no `>`: every line is plain text, so the message is its text escaped (most
        // messages; parsing by Character was 18 % of an HTML export).
        guard text.utf8.contains(where: { $0 == 0x2A || $0 == 0x5F || $0 == 0x7E || $0 == 0x60 || $0 == 0x3E }) else { return escape(text) }
        return html(blocks(text), escape: escape)
    }

    static func html(_ blocks: [Block], escape: (String) -> String) -> String {
        var parts: [String] = []
        for block in blocks {
            switch block {
            case .line(let spans): parts.append(html(spans, escape: escape))
            case .preformatted(let lines): parts.append("<pre>\(escape(lines.joined(separator: "\n")))</pre>")
            case .quote(_, let inner): parts.append("<blockquote>\(html(inner, escape: escape))</blockquote>")
            }
        }
        return parts.joined(separator: "\n")
    }

    static func html(_ spans: [Span], escape: (String) -> String) -> String {
        spans.map { span in
            switch span {
            case .text(let text): return escape(text)
            case .styled(let style, let inner):
                let tag = switch style {
                case .strong: "strong"
                case .emphasis: "em"
                case .strike: "s"
                case .code: "code"
                }
                return "<\(tag)>\(html(inner, escape: escape))</\(tag)>"
            }
        }.joined()
    }

    /// The message for a colour terminal: bold, italic, struck-through and cyan code spans, dim quotes and blocks.
    /// The text with terminal colours for its styles. Everything of the text itself is escaped
    /// (`VisibleText`), so the only escape sequences in the result are these colours.
    public static func terminal(_ text: String) -> String {
        terminal(blocks(text), quoted: false)
    }

    static func terminal(_ blocks: [Block], quoted: Bool) -> String {
        let reset = "\u{1B}[0m" + (quoted ? "\u{1B}[2m" : "")
        var lines: [String] = []
        for block in blocks {
            switch block {
            case .line(let spans): lines.append(terminal(spans, reset: reset))
            case .preformatted(let fenced): lines.append(contentsOf: fenced.map { "\u{1B}[36m\(visible($0))\(reset)" })
            case .quote(let prefixes, let inner):
                let quotedLines = terminal(inner, quoted: true).split(separator: "\n", omittingEmptySubsequences: false)
                for (offset, line) in quotedLines.enumerated() {
                    lines.append("\u{1B}[2m\(offset < prefixes.count ? visible(prefixes[offset]) : "> ")\(line)\(reset)")
                }
            }
        }
        return lines.joined(separator: "\n")
    }

    static func terminal(_ spans: [Span], reset: String) -> String {
        spans.map { span in
            switch span {
            case .text(let text): return visible(text)
            case .styled(let style, let inner):
                let code = switch style {
                case .strong: "1"
                case .emphasis: "3"
                case .strike: "9"
                case .code: "36"
                }
                return "\u{1B}[\(code)m\(terminal(inner, reset: reset + "\u{1B}[\(code)m"))\(reset)"
            }
        }.joined()
    }

    private static func visible(_ text: String) -> String {
        VisibleText.escaped(text, keepingLineBreaks: true)
    }
}
