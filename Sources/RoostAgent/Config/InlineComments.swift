/// Comments after a value (`ca_file = /p/ca.pem   # my CA`), which GKeyFile would keep as part of the value.
///
/// In a `key = value` line, a `#` or `;` that follows a space or tab starts a comment: it and the blanks
/// before it are dropped before GKeyFile reads the file. `\#` and `\;` keep the character itself (for a
/// password or command that needs ` #`). Lines keep their numbers, so problems still name the right line.
/// Header lines and whole-line comments are left to GKeyFile.
enum InlineComments {
    static func strip(_ text: String) -> String {
        var lines: [Substring] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lines.append(Substring(strip(line: line)))
        }
        return lines.joined(separator: "\n")
    }

    static func strip(line: Substring) -> String {
        let content = line.drop { $0 == " " || $0 == "\t" }
        guard let first = content.first, first != "#", first != "[", let equals = content.firstIndex(of: "=") else {
            return String(line)
        }
        var result = String(line[..<equals]) + "="
        var value = ""
        var previous: Character = "="
        var index = content.index(after: equals)
        while index < content.endIndex {
            let character = content[index]
            if character == "\\", content.index(after: index) < content.endIndex {
                let next = content[content.index(after: index)]
                if next == "#" || next == ";" {
                    value.append(next)
                } else {
                    value.append(character)
                    value.append(next)
                }
                previous = next
                index = content.index(index, offsetBy: 2)
                continue
            }
            if (character == "#" || character == ";") && (previous == " " || previous == "\t") {
                while value.last == " " || value.last == "\t" { value.removeLast() }
                // A line end kept from a CRLF file stays.
                if line.last == "\r" { value.append("\r") }
                break
            }
            value.append(character)
            previous = character
            index = content.index(after: index)
        }
        result += value
        return result
    }
}
