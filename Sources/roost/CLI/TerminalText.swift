import RoostCore

/// Text on its way to a person: every human-readable line a command prints goes through `Output`, which
/// renders it as this, so control characters from anyone else (a body with ESC or BEL, a JID with a CR, a
/// bidirectional override in a server's error) show as visible escapes (`\u{1b}`, `\r`) instead of acting
/// on the terminal. Line feeds and tabs stay (multi-line bodies). `--json` output is never touched.
///
/// The only escape sequences that reach the terminal are styles Roost adds itself, through `styled`: text
/// built by interpolation escapes what it interpolates and keeps its literal parts, so
/// `"\(time) \(TerminalText.styled(word, "1;33"))"` escapes `time` and the word, and keeps the style.
struct TerminalText: ExpressibleByStringInterpolation, Sendable, Equatable, CustomStringConvertible {
    /// What is written: foreign text escaped, Roost's own styles as they are.
    private(set) var rendered: String

    /// Plain text from anywhere: every hidden character escaped.
    init(_ plain: String) {
        rendered = VisibleText.escaped(plain, keepingLineBreaks: true)
    }

    init(stringLiteral value: String) {
        rendered = value
    }

    init(stringInterpolation: Interpolation) {
        rendered = stringInterpolation.rendered
    }

    var description: String { rendered }

    struct Interpolation: StringInterpolationProtocol {
        fileprivate var rendered = ""

        init(literalCapacity: Int, interpolationCount: Int) {
            rendered.reserveCapacity(literalCapacity + 16 * interpolationCount)
        }

        mutating func appendLiteral(_ literal: String) {
            rendered += literal
        }

        mutating func appendInterpolation(_ text: TerminalText) {
            rendered += text.rendered
        }

        mutating func appendInterpolation(_ value: some CustomStringConvertible) {
            rendered += VisibleText.escaped(value.description, keepingLineBreaks: true)
        }
    }

    /// `text` shown in an SGR style (`1;33` is bold yellow), for a terminal only.
    static func styled(_ text: String, _ sgr: String) -> TerminalText {
        var styled = TerminalText(text)
        styled.rendered = "\u{1B}[\(sgr)m" + styled.rendered + "\u{1B}[0m"
        return styled
    }

    static func + (lhs: TerminalText, rhs: TerminalText) -> TerminalText {
        var sum = lhs
        sum.rendered += rhs.rendered
        return sum
    }

    static func += (lhs: inout TerminalText, rhs: TerminalText) {
        lhs.rendered += rhs.rendered
    }
}
