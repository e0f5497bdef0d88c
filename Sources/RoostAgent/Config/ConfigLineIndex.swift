/// The one pass over the config's lines before GKeyFile parses it (GKeyFile stays the parser of record for
/// escapes and values): finds the line of every group header and key, because GKeyFile reports neither, and
/// drops comments after a value, which GKeyFile would keep as part of it (`stripped`, what GKeyFile reads).
///
/// It follows GKeyFile's line rules (leading whitespace ignored; `#` comments; `[group]`; `key = value`)
/// and also reports what GKeyFile would accept silently but is almost surely a mistake: a group or key
/// written twice. Problems never quote a line, since the line might hold a password.
struct ConfigLineIndex {
    /// The text with comments after values dropped, one line per line of the file (LF or CRLF), so that line
    /// numbers stay right.
    private(set) var stripped = ""
    private(set) var groupLines: [String: Int] = [:]
    private(set) var keyLines: [String: [String: Int]] = [:]
    private(set) var problems: [ConfigProblem] = []
    /// The first key that holds a secret (`ConfigSecrets`), with its line; the file must then be private.
    private(set) var firstSecret: (key: String, line: Int)?

    init(text: String, path: String) {
        var currentGroup: String?
        // Keys under a broken header were already reported with the header.
        var inBrokenGroup = false
        var lineNumber = 0
        var strippedLines: [String] = []
        defer { stripped = strippedLines.joined(separator: "\n") }
        // "\r\n" is a single Character in Swift, so both line ends must be named.
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            lineNumber += 1
            strippedLines.append(Self.strip(line: rawLine))
            var line = rawLine.drop { $0 == " " || $0 == "\t" }
            if line.last == "\r" { line = line.dropLast() }
            if line.isEmpty || line.first == "#" { continue }

            func problem(_ message: String, key: String? = nil) {
                problems.append(ConfigProblem(path: path, line: lineNumber, key: key, message: message))
            }

            if line.first == "[" {
                let trimmed = line.reversed().drop { $0 == " " || $0 == "\t" }
                guard trimmed.first == "]", line.count >= 2 else {
                    problem("a group header must look like [name]")
                    inBrokenGroup = true
                    continue
                }
                let name = String(line.dropFirst().prefix(trimmed.count - 2))
                guard !name.isEmpty, !name.contains(where: { $0 == "[" || $0 == "]" || $0.isASCII && $0.asciiValue! < 0x20 }) else {
                    problem("a group header must look like [name]")
                    inBrokenGroup = true
                    continue
                }
                if let earlier = groupLines[name] {
                    problem("group [\(name)] already started at line \(earlier); merge the two")
                } else {
                    groupLines[name] = lineNumber
                }
                currentGroup = name
                inBrokenGroup = false
                continue
            }

            guard let equals = line.firstIndex(of: "=") else {
                problem("expected `key = value`, a [group] header or a # comment")
                continue
            }
            let key = String(line[..<equals].reversed().drop { $0 == " " || $0 == "\t" }.reversed())
            guard !key.isEmpty else {
                problem("a line starts with `=`; the key is missing")
                continue
            }
            if firstSecret == nil {
                let value = line[line.index(after: equals)...].drop { $0 == " " || $0 == "\t" }
                if ConfigSecrets.holdsSecret(key: key, value: String(value)) { firstSecret = (key, lineNumber) }
            }
            if inBrokenGroup { continue }
            guard let group = currentGroup else {
                problem("key before the first [group] header", key: key)
                continue
            }
            if let earlier = keyLines[group]?[key] {
                problem("set twice in [\(group)] (first at line \(earlier)); keep one", key: key)
            } else {
                keyLines[group, default: [:]][key] = lineNumber
            }
        }
    }

    func locations(path: String) -> ConfigLocations {
        ConfigLocations(path: path, groupLines: groupLines, keyLines: keyLines)
    }

    /// A comment after a value (`ca_file = /p/ca.pem   # my CA`) dropped: in a `key = value` line, a `#` or `;`
    /// that follows a space or tab starts a comment, and it and the blanks before it go. `\#` and `\;` keep the
    /// character itself (for a password or command that needs ` #`). Header lines and whole-line comments are
    /// left to GKeyFile.
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

/// Which settings hold a secret, so that a file holding one must be private (mode 0600): passwords (the
/// account's, an email sink's), tokens (a webhook's), header values that authenticate (`header.Authorization`,
/// `header.X-API-Key`, cookies…), and credentials written into a URL (`https://user:secret@…`,
/// `?token=…`). Their `_command` counterparts run a program instead and hold none.
enum ConfigSecrets {
    static func holdsSecret(key: String, value: String) -> Bool {
        let key = key.lowercased()
        if key == "password" || key == "token" || key.hasSuffix("_password") || key.hasSuffix("_token") || key.hasSuffix("_secret") {
            return !value.trimmingCharacters(in: .whitespaces).isEmpty
        }
        if key.hasPrefix("header.") {
            let name = key.dropFirst("header.".count)
            if ["authorization", "proxy-authorization", "cookie"].contains(name)
                || ["token", "key", "secret", "auth", "password", "session"].contains(where: name.contains) {
                return true
            }
        }
        return urlCarriesCredentials(value)
    }

    /// `scheme://user:password@host…`, or a query parameter named like a credential.
    static func urlCarriesCredentials(_ value: String) -> Bool {
        guard let scheme = value.range(of: "://") else { return false }
        let rest = value[scheme.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = authority.lastIndex(of: "@"), authority[..<at].contains(":") { return true }
        guard let query = rest.firstIndex(of: "?") else { return false }
        for pair in rest[rest.index(after: query)...].split(separator: "&") {
            let name = pair.prefix { $0 != "=" }.lowercased()
            if ["token", "key", "secret", "auth", "password", "passwd", "pass", "sig", "signature"].contains(where: name.contains) { return true }
        }
        return false
    }
}
