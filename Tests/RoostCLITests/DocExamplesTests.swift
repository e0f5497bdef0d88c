import Foundation
import Testing
import RoostTestSupport
@testable import roost

/// Issue 17, "Keep it true": every command example of README.md, of the `--help` texts and of the man page
/// is taken from the text and run, so the documentation cannot drift from the program again. Examples that
/// only read (search, log, export, stats, …) run against `EverydayFixture` and must exit 0 or 1 as
/// documented (`status`, with no agent, 3); examples that act on a server or run for long (`roost run`,
/// `send`, `log --follow`, …) must be command lines roost accepts.
@Suite("Documentation examples")
struct DocExamplesTests {
    struct Example: CustomStringConvertible {
        let source: String
        let text: String
        var description: String { "\(source): \(text)" }
    }

    // MARK: Finding the examples

    static func readme() throws -> [Example] {
        let text = try String(contentsOfFile: EverydayCLITests.repository + "/README.md", encoding: .utf8)
        var examples: [Example] = []
        var inCode = false
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.hasPrefix("```") {
                inCode.toggle()
                continue
            }
            guard inCode else { continue }
            var command = line.trimmingCharacters(in: .whitespaces)
            if command.hasPrefix("$ ") { command.removeFirst(2) }
            if command.hasPrefix("roost ") { examples.append(Example(source: "README.md:\(number + 1)", text: command)) }
        }
        return examples
    }

    static func help() -> [Example] {
        var texts = [("roost --help", HelpFormatter(commands: RoostCLI.allCommands).rootHelp())]
        for command in RoostCLI.allCommands { texts.append(("roost \(command.name) --help", command.discussion)) }
        var examples: [Example] = []
        for (source, text) in texts {
            let flat = text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            for piece in flat.split(separator: "`", omittingEmptySubsequences: false).enumerated() where piece.offset % 2 == 1 {
                if piece.element.hasPrefix("roost ") || piece.element == "roost" {
                    examples.append(Example(source: source, text: String(piece.element)))
                }
            }
        }
        return examples
    }

    static func manPage() throws -> [Example] {
        let text = try String(contentsOfFile: EverydayCLITests.repository + "/contrib/man/roost.1", encoding: .utf8)
        var examples: [Example] = []
        var inExamples = false
        for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(raw)
            if line.hasPrefix(".SH ") { inExamples = line.hasPrefix(".SH EXAMPLES") }
            var candidate: String?
            if line.hasPrefix(".SS ") || line.hasPrefix(".BI ") || line.hasPrefix(".B ") || line.hasPrefix(".BR ") {
                // Macro arguments: alternating-font macros (.BI, .BR) join them, the others put spaces between.
                let body = line.drop { $0 != " " }.dropFirst()
                candidate = Self.roffWords(String(body), concatenate: line.hasPrefix(".BI ") || line.hasPrefix(".BR "))
            } else if inExamples, !line.hasPrefix(".") {
                candidate = line
            }
            guard let candidate else { continue }
            let plain = Self.unroff(candidate).trimmingCharacters(in: .whitespaces)
            if plain.hasPrefix("roost ") { examples.append(Example(source: "roost.1:\(number + 1)", text: plain)) }
        }
        return examples
    }

    /// A macro's arguments (quoted or bare) joined: `.BI "roost roster add " JID " [--name " NAME "]"` →
    /// `roost roster add JID [--name NAME]`; `.B roost omemo retry` → `roost omemo retry`.
    static func roffWords(_ text: String, concatenate: Bool) -> String {
        var arguments: [String] = []
        var current = ""
        var quoted = false
        var inArgument = false
        for character in text {
            if character == "\"" {
                quoted.toggle()
                inArgument = true
            } else if character == " " && !quoted {
                if inArgument { arguments.append(current) }
                current = ""
                inArgument = false
            } else {
                current.append(character)
                inArgument = true
            }
        }
        if inArgument { arguments.append(current) }
        return arguments.joined(separator: concatenate ? "" : " ").replacingOccurrences(of: "  ", with: " ")
    }

    static func unroff(_ text: String) -> String {
        var text = text
        for (escape, plain) in [("\\-", "-"), ("\\fB", ""), ("\\fR", ""), ("\\fI", ""), ("\\fP", ""), ("\\(em", "—"), ("\\(sc", "§"),
                                ("\\~", " "), ("\\ ", " "), ("\\e", "\\")] {
            text = text.replacingOccurrences(of: escape, with: plain)
        }
        return text
    }

    // MARK: From an example to a command line

    /// Shell-like words of one example: quotes honoured, a comment, a pipe or a redirection ends it.
    static func words(_ text: String) -> [String] {
        var words: [String] = []
        var word = ""
        var inWord = false
        var quote: Character?
        var previous: Character = " "
        var brackets = 0
        for character in text {
            if let open = quote {
                if character == open { quote = nil } else { word.append(character) }
            } else if character == "'" || character == "\"" {
                quote = character
                inWord = true
            } else if character == "[" || character == "]" {
                brackets += character == "[" ? 1 : -1
                word.append(character)
                inWord = true
            } else if character == " " {
                if inWord { words.append(word) }
                word = ""
                inWord = false
            } else if (character == "#" && previous == " ") || ((character == "|" || character == ">" || character == ";") && previous == " "
                                                                   && brackets == 0) {
                break
            } else {
                word.append(character)
                inWord = true
            }
            previous = character
        }
        if inWord { words.append(word) }
        return words
    }

    struct UnknownPlaceholder: Error, CustomStringConvertible {
        let word: String
        var description: String { "no stand-in for the placeholder \(word): add one to DocExamplesTests.stand(in:after:)" }
    }

    /// A value for a placeholder such as `JID`, depending on the command and the option before it.
    static func stand(in placeholder: String, after previous: String, command: String, id: String) throws -> String {
        switch (placeholder, previous) {
        case (_, "--account"), ("ACCOUNT", _): return "me@example.org"
        case ("N", "-n"), ("N", "--limit"), ("N", "--lines"), ("N", "--context"), ("N", "-C"), ("N", "--offset"), ("N", "-p"), ("N", "--port"), ("N", "--days"): return "5"
        case ("MODE", "--split"): return "conversation"
        case ("MODE", "--tls"): return "starttls"
        case ("FORMAT", _): return command == "import" ? "auto" : "csv"
        case ("JID", _), ("WHO", _), ("CONVERSATION", _): return "bob@example.org"
        case ("ID", _): return id
        case ("QUERY", _): return "travel"
        case ("TEXT", _): return "hi"
        case ("NAME", _), ("NICK", _), ("N", _), ("F", _): return "Bob"
        case ("FILE", _), ("PATH", _): return "missing-file"
        case ("LEVEL", _): return "info"
        case ("WHEN", _): return "auto"
        case ("UNIT", _): return "month"
        case ("SIZE", _): return "25M"
        case ("DATE", _): return "2026-01-15"
        case ("STATE", _): return "stored"
        case ("LIST", _): return "states"
        case ("ZONE", _): return "UTC"
        case ("CMD", _): return "echo pw"
        case ("HOST", _), ("H", _): return "127.0.0.1"
        case ("PORT", _), ("P", _): return "9"
        case ("ROOM", _): return "room@conference.example.org"
        case ("ADDRESS", _): return "127.0.0.1"
        case ("FINGERPRINT", _): return "0123456789abcdef"
        case ("GROUP", _): return "Friends"
        case ("COMMAND", _): return "search"
        case ("KIND", _): return "contacts"
        case ("MODE", _): return "conversation"
        default: throw UnknownPlaceholder(word: placeholder)
        }
    }

    /// The command lines an example stands for (without `roost`), as checks: each check is met when one of
    /// its lines is accepted. A plain example is one line. A synopsis checks each optional part (`[...]`) and
    /// each of its alternatives (`[a | b]`): alone with the required words, or else together with the parts
    /// before it (`--split` needs the `-o` written before it; `--around` excludes `--since`). The first of `a|b`
    /// written in one word; placeholders replaced.
    static func variants(_ example: Example, id: String) throws -> [[[String]]] {
        var words = Self.words(example.text)
        words.removeFirst()
        // Items: a plain word, or an optional group's alternatives.
        enum Item { case word(String); case group([[String]]) }
        var items: [Item] = []
        var depth = 0
        var alternatives: [[String]] = []
        for word in words {
            let opens = word.prefix { $0 == "[" }.count
            var plain = String(word.dropFirst(opens))
            var closes = 0
            while plain.hasSuffix("]") {
                plain.removeLast()
                closes += 1
            }
            if plain.hasSuffix("...") { plain.removeLast(3) }
            if plain == "…" { plain = "" }
            if plain != "|", plain.contains("|"), !plain.contains(":") {
                plain = String(plain.split(separator: "|").first ?? "")
            }
            if depth == 0 && opens == 0 {
                if word == "|" { continue }
                if !plain.isEmpty { items.append(.word(plain)) }
                continue
            }
            if depth == 0 { alternatives = [[]] }
            depth += opens
            if plain == "|" && depth == 1 {
                alternatives.append([])
            } else if !plain.isEmpty, plain != "|" {
                alternatives[alternatives.count - 1].append(plain)
            }
            depth -= closes
            if depth <= 0 {
                depth = 0
                items.append(.group(alternatives.filter { !$0.isEmpty }))
            }
        }
        func substituted(_ line: [String]) throws -> [String] {
            var result: [String] = []
            for word in line {
                if word.allSatisfy({ $0.isUppercase || $0 == "_" }), word.first?.isLetter == true {
                    result.append(try stand(in: word, after: result.last ?? "", command: result.first ?? "", id: id))
                } else {
                    result.append(word)
                }
            }
            return result
        }
        let base = items.compactMap { item -> String? in if case .word(let word) = item { word } else { nil } }
        // A synopsis with optional parts may need one of them (`vcard set [--nickname N] [--photo FILE]`):
        // then only its parts are checked.
        let hasOptions = items.contains { if case .group = $0 { true } else { false } }
        var checks = hasOptions ? [] : [[try substituted(base)]]
        for (index, item) in items.enumerated() {
            guard case .group(let choices) = item else { continue }
            for choice in choices {
                var alone: [String] = []
                var together: [String] = []
                for (other, part) in items.enumerated() {
                    switch part {
                    case .word(let word):
                        alone.append(word)
                        together.append(word)
                    case .group(let earlier):
                        if other == index {
                            alone += choice
                            together += choice
                        } else if other < index, let first = earlier.first {
                            together += first
                        }
                    }
                }
                checks.append([try substituted(alone), try substituted(together)])
            }
        }
        return checks
    }

    /// `roost show` or `roost requests accept` in a help text names a command, it is no example to run.
    static func isReference(_ example: Example) -> Bool {
        let words = Self.words(example.text)
        return example.source.hasSuffix("--help") && words.count <= 3
            && words.allSatisfy { $0.allSatisfy { $0.isLowercase || $0 == "-" } && !$0.hasPrefix("-") }
    }

    /// Whether an example only reads (and so runs against the fixture), with the statuses it may end with.
    static func readingStatuses(_ arguments: [String]) -> Set<Int32>? {
        let parsed = try? RoostCLI(commands: RoostCLI.allCommands).parse(arguments)
        guard let command = parsed?.command else { return [0] }   // help, --help, --version
        let positionals = arguments.filter { !$0.hasPrefix("-") }
        let first = positionals.dropFirst().first
        switch command {
        case is SearchCommand, is CountCommand, is ShowCommand, is StatsCommand, is ExportCommand, is ImportCommand,
             is PresenceCommand, is CompletionsCommand:
            return [0, 1]
        case let log as LogCommand: return log.follow ? nil : [0, 1]
        case is FilesCommand: return first == "fetch" ? nil : [0, 1]
        // init writes and logs in, --check logs in: they act on a server.
        case let config as ConfigCommand: return config.initialise || config.checkLogin ? nil : [0, 1]
        case is NotifyCommand: return first == "test" ? nil : [0, 1]
        case is VCardCommand: return first == nil ? [0, 1] : nil
        case is RequestsCommand: return first == nil ? [0, 1] : nil
        case is RosterCommand: return first == nil && arguments.contains("--cached") ? [0, 1] : nil
        case is VerifyCommand: return arguments.contains("--files") ? [0, 1] : nil
        case is StatusCommand: return [3]
        case let forget as ForgetCommand: return forget.dryRun ? [0, 1] : nil
        default: return nil
        }
    }

    @Test func everyExampleWorksAsDocumented() throws {
        let fixture = try EverydayFixture(defaultAccount: "me@example.org")
        let id = try fixture.shortID(of: "see you at 5")
        let examples = try Self.readme() + Self.help() + Self.manPage()
        #expect(examples.count > 80, "examples found: \(examples.count)")
        let cli = RoostCLI(commands: RoostCLI.allCommands)
        var ran = 0, parsed = 0
        for (number, example) in examples.enumerated() {
            if Self.isReference(example) {
                // A command named in passing: it must exist.
                do { _ = try cli.parse(Array(Self.words(example.text).dropFirst()) + ["--help"]) } catch {
                    Issue.record("\(example): no such command: \(error)")
                }
                continue
            }
            let checks: [[[String]]]
            do { checks = try Self.variants(example, id: id) } catch {
                Issue.record("\(example): \(error)")
                continue
            }
            for (variant, lines) in checks.enumerated() {
                // Each run in a home of its own, so examples writing the same file do not meet; `~` as a shell expands it.
                let home = fixture.folder + "/examples/\(number)-\(variant)"
                var refusal: (any Error)?
                let accepted = lines.first { line in
                    do {
                        _ = try cli.parse(line)
                        return true
                    } catch {
                        refusal = refusal ?? error
                        return false
                    }
                }
                guard let written = accepted else {
                    Issue.record("\(example): roost refuses `roost \(lines[0].joined(separator: " "))`: \(refusal.map { "\($0)" } ?? "")")
                    continue
                }
                let arguments = written.map { $0 == "~" ? home : $0.hasPrefix("~/") ? home + $0.dropFirst() : $0 }
                guard let statuses = Self.readingStatuses(arguments) else {
                    parsed += 1
                    continue
                }
                try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
                let result = try RoostBinary.run(["--config", fixture.config] + arguments, environment: fixture.environment.merging(["HOME": home]) { $1 },
                                                 stdin: "", directory: home)
                ran += 1
                #expect(statuses.contains(result.status),
                        "\(example): `roost \(arguments.joined(separator: " "))` exited \(result.status), documented \(statuses.sorted()): \(result.stderr)")
            }
        }
        #expect(ran > 40 && parsed > 20, "ran \(ran), parsed \(parsed)")
    }

    @Test func theExtractionUnderstandsTheNotations() throws {
        let example = Example(source: "test", text: "roost search [--oldest-first | --rank] [-n N] QUERY... | jq .body # comment")
        #expect(try Self.variants(example, id: "abcd1234").map(\.first) == [["search", "--oldest-first", "travel"],
                                                                          ["search", "--rank", "travel"], ["search", "-n", "5", "travel"]])
        #expect(try Self.variants(example, id: "abcd1234").last?.last == ["search", "--oldest-first", "-n", "5", "travel"], "with the parts before")
        let synopsis = Example(source: "test", text: "roost vcard set [--nickname N] [--photo FILE | --no-photo]")
        #expect(try Self.variants(synopsis, id: "x").map(\.first) == [["vcard", "set", "--nickname", "Bob"],
                                                          ["vcard", "set", "--photo", "missing-file"], ["vcard", "set", "--no-photo"]])
        #expect(try Self.variants(Example(source: "t", text: "roost completions bash|zsh|fish"), id: "x") == [[["completions", "bash"]]])
        #expect(try Self.variants(Example(source: "t", text: "roost search 'with:a b' --account JID"), id: "x")
                == [[["search", "with:a b", "--account", "me@example.org"]]])
        #expect(try Self.variants(Example(source: "t", text: "roost import [-f FORMAT] PATH"), id: "x").last?.first == ["import", "-f", "auto", "missing-file"])
        #expect(try Self.variants(Example(source: "t", text: "roost stats [--by day|week]"), id: "x").map(\.first) == [["stats", "--by", "day"]])
        #expect(Self.roffWords("\"roost roster add \" JID \" [\\-\\-name \" NAME \"]\"", concatenate: true) == "roost roster add JID [\\-\\-name NAME]")
        #expect(Self.roffWords("roost omemo retry", concatenate: false) == "roost omemo retry")
        #expect(throws: UnknownPlaceholder.self) { try Self.variants(Example(source: "t", text: "roost send WHATEVER"), id: "x") }
        #expect(Self.isReference(Example(source: "roost log --help", text: "roost requests accept")))
        #expect(!Self.isReference(Example(source: "roost log --help", text: "roost log --around ID")))
    }
}
