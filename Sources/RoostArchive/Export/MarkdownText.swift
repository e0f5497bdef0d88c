/// Escaping for CommonMark text: every character that could start markup is backslash-escaped (CommonMark
/// allows a backslash before any ASCII punctuation), and line starts that would become lists, headings,
/// quotes or thematic breaks are neutralised.
enum MarkdownText {
    private static let special: Set<Character> = ["\\", "`", "*", "_", "[", "]", "<", ">", "#", "|", "~", "&", "{", "}", "$"]

    static func escape(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { escapeLine(String($0)) }.joined(separator: "\n")
    }

    private static func escapeLine(_ line: String) -> String {
        var result = ""
        var atStart = true
        var digitsSoFar = true
        for character in line {
            if special.contains(character) {
                result.append("\\")
            } else if atStart && (character == "-" || character == "+" || character == "=") {
                result.append("\\")
            } else if digitsSoFar && !result.isEmpty && (character == "." || character == ")") {
                result.append("\\")
            }
            if !character.isWhitespace { atStart = false }
            if !(character.isASCII && character.isNumber) { digitsSoFar = false }
            result.append(character)
        }
        return result
    }

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
