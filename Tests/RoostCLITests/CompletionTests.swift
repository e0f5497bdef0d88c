import Foundation
import Testing
import RoostTestSupport
@testable import roost

/// Issue 17, item 12: the completion scripts, generated from the commands' specs, complete every command,
/// every option, every value with choices, subcommands, contacts and pending requesters — checked in a real
/// bash, zsh and fish.
@Suite("Shell completions", .requires(.tool("/usr/bin/zsh"), .tool("/usr/bin/fish"), .tool("/bin/bash")))
struct CompletionTests {
    /// The command lines to complete (the last word is what is being typed) and what each must offer.
    struct Case {
        let line: [String]
        let expected: [String]
    }

    private func cases(config: String) -> [Case] {
        var cases = [Case(line: ["roost", ""], expected: RoostCLI.allCommands.map { $0.name } + ["help"])]
        for command in RoostCLI.allCommands {
            let options = GlobalOptions.specs + command.options
            cases.append(Case(line: ["roost", command.name, "-"],
                              expected: options.map { "--" + $0.long } + options.compactMap { $0.short.map { "-\($0)" } }))
            for option in command.options {
                if case .choices(let words) = option.completion {
                    cases.append(Case(line: ["roost", command.name, "--" + option.long, ""], expected: words))
                }
            }
            if case .subcommands(let subs)? = command.arguments.first {
                cases.append(Case(line: ["roost", command.name, ""], expected: subs.map(\.name)))
            }
        }
        cases += [
            Case(line: ["roost", "--log-level", ""], expected: ["error", "warning", "info", "debug"]),
            Case(line: ["roost", "search", "--color", ""], expected: ["auto", "always", "never"]),
            Case(line: ["roost", "--config", config, "log", ""], expected: ["bob@example.org", "wang@example.cn", "alice@example.org"]),
            Case(line: ["roost", "--config", config, "send", "b"], expected: ["bob@example.org", "bert@example.org"]),
            Case(line: ["roost", "--config", config, "requests", "accept", ""], expected: ["carol@example.org"]),
            Case(line: ["roost", "--config", config, "search", "--account", ""], expected: ["me@example.org", "work@example.net"]),
            Case(line: ["roost", "--config", config, "notify", "test", "--sink", ""], expected: ["phone"]),
            Case(line: ["roost", "search", "wi"], expected: ["with:"]),
            Case(line: ["roost", "search", "is:"], expected: ["in", "out", "edited"]),
            Case(line: ["roost", "--config", config, "search", "with:b"], expected: ["bob@example.org", "bert@example.org"]),
            Case(line: ["roost", "files", ""], expected: ["fetch", "has:", "with:"]),
            Case(line: ["roost", "export", "-o", "conf"], expected: ["config.ini"]),
            Case(line: ["roost", "help", "sta"], expected: ["stats", "status"]),
        ]
        return cases
    }

    private struct Shells {
        let fixture: EverydayFixture
        let bin: String
        let folder: String

        init() throws {
            fixture = try EverydayFixture()
            try "\n[sink phone]\ntype = command\ncommand = true\n".appendLine(to: fixture.config)
            folder = fixture.folder + "/completions"
            bin = folder + "/bin"
            try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: bin + "/roost", withDestinationPath: RoostBinary.path)
            for shell in ["bash", "zsh", "fish"] {
                let script = try RoostBinary.run(["completions", shell]).stdout
                try script.write(toFile: folder + "/" + (shell == "zsh" ? "_roost" : "roost.\(shell)"), atomically: true, encoding: .utf8)
            }
        }

        var environment: [String: String] { ["PATH": "\(bin):/usr/bin:/bin", "HOME": fixture.folder + "/home", "TERM": "dumb"] }

        /// What `shell` offers for each line, in order.
        func complete(_ shell: String, _ lines: [[String]]) throws -> [[String]] {
            let harness: String
            var arguments: [String]
            switch shell {
            case "bash":
                harness = """
                    source "$1/roost.bash"; shift
                    for line in "$@"; do
                        eval "COMP_WORDS=($line)"
                        COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
                        COMPREPLY=()
                        _roost
                        # One candidate a line; a candidate holding a newline shows it as ⏎ (issue 30, 1).
                        printf '%s\\n' "${COMPREPLY[@]//$'\\n'/⏎}"
                        echo '=== end'
                    done
                    """
                // bash splits `with:b` at the colon, as readline would.
                arguments = lines.map { words in
                    words.flatMap { word -> [String] in
                        guard let colon = word.firstIndex(of: ":"), !word.hasPrefix("/") else { return [word] }
                        return [String(word[..<colon]), ":", String(word[word.index(after: colon)...])].filter { !$0.isEmpty || $0 == "" }
                    }.map { "'\($0)'" }.joined(separator: " ")
                }
            case "zsh":
                harness = """
                    zmodload zsh/zpty
                    dir=$1; shift
                    for line in "$@"; do
                      zpty z zsh -f -i
                      zpty -w z "PROMPT=''; RPROMPT=''; fpath=($dir \\$fpath); autoload -Uz compinit; compinit -u -D"
                      zpty -w z 'compadd() { local -a __captured; builtin compadd -O __captured "$@"; builtin compadd "$@"; local item; for item in $__captured; do print -r -- "<<<$item>>>"; done }'
                      zpty -w z 'autoload -Uz _roost; _roost_then_mark() { _roost "$@"; print -r -- "COMPLETION""-DONE"; }; compdef _roost_then_mark roost'
                      zpty -w z "zstyle ':completion:*' menu false; setopt nolistbeep; unsetopt autolist; LISTMAX=100000"
                      zpty -w z 'print -r -- RE""ADY'
                      zpty -r z out $'*\\nREADY*'
                      zpty -w -n z "$line"$'\\t'
                      zpty -r z out '*COMPLETION-DONE*'
                      for row in ${(f)out}; do [[ $row =~ '<<<(.*)>>>' ]] && print -r -- "${match[1]}"; done
                      zpty -w z $'\\C-u'
                      zpty -d z
                      print -r -- '=== end'
                    done
                    """
                arguments = lines.map { $0.joined(separator: " ") }
            default:
                harness = """
                    source $argv[1]/roost.fish
                    for line in $argv[2..-1]
                        complete -C "$line" | string replace -r '\\t.*' ''
                        echo '=== end'
                    end
                    """
                arguments = lines.map { $0.joined(separator: " ") }
            }
            let script = folder + "/harness.\(shell)"
            try harness.write(toFile: script, atomically: true, encoding: .utf8)
            let result = try RoostBinary.runProgram(shell == "bash" ? "/bin/bash" : "/usr/bin/\(shell)",
                                                    (shell == "zsh" ? ["-f"] : []) + [script, folder] + arguments,
                                                    environment: environment, timeout: 300, directory: fixture.folder)
            var results: [[String]] = [[]]
            for line in result.stdout.split(separator: "\n", omittingEmptySubsequences: false) {
                if line == "=== end" { results.append([]) } else if !line.isEmpty { results[results.count - 1].append(String(line)) }
            }
            return Array(results.dropLast())
        }

        /// The line an interactive bash (readline, in a pseudo-terminal driven by zsh's zpty) holds after
        /// typing each of `lines` and pressing TAB once; a newline in it shows as ⏎.
        func bashLineAfterTab(_ lines: [String]) throws -> [String] {
            let rc = """
                PS1=''
                source "\(folder)/roost.bash"
                _show_line() { printf '<<<%s>>>\\n' "${READLINE_LINE//$'\\n'/⏎}"; }
                bind -x '"\\C-t": _show_line'
                echo READY

                """
            try rc.write(toFile: folder + "/readline.bashrc", atomically: true, encoding: .utf8)
            let harness = """
                zmodload zsh/zpty
                dir=$1; shift
                zpty b bash --noprofile --rcfile $dir/readline.bashrc -i
                zpty -r b out '*READY*'
                for line in "$@"; do
                  zpty -w -n b "$line"$'\\t\\C-t'
                  zpty -r b out '*>>>*'
                  for row in ${(f)out}; do [[ $row =~ '<<<(.*)>>>' ]] && print -r -- "${match[1]}"; done
                  zpty -w -n b $'\\C-a\\C-k'
                  print -r -- '=== end'
                done
                zpty -d b
                """
            let script = folder + "/harness-readline.zsh"
            try harness.write(toFile: script, atomically: true, encoding: .utf8)
            let result = try RoostBinary.runProgram("/usr/bin/zsh", ["-f", script, folder] + lines,
                                                    environment: environment, timeout: 120, directory: fixture.folder)
            var results: [String] = []
            var current = ""
            for row in result.stdout.split(separator: "\n", omittingEmptySubsequences: false) {
                if row == "=== end" { results.append(current); current = "" } else { current += row }
            }
            return results
        }
    }

    /// Issue 30, item 1: TAB in a real interactive bash adds at most one whole word to the line — never every
    /// candidate joined by newlines (which Enter would then run as commands).
    @Test func bashTabPutsOneWordOnTheLine() throws {
        let shells = try Shells()
        let config = shells.fixture.config
        let cases: [(typed: String, expected: String)] = [
            ("roost export --format ", "roost export --format "), // several formats: the line stays as typed
            ("roost export --format js", "roost export --format jsonl "),
            ("roost --log-level ", "roost --log-level "),
            ("roost search --l", "roost search --l"), // --limit, --log-level
            ("roost help sta", "roost help stat"), // stats, status: their common start
            ("roost --config \(config) log al", "roost --config \(config) log alice@example.org "),
            ("roost --config \(config) search with:bo", "roost --config \(config) search with:bob@example.org "),
        ]
        let lines = try shells.bashLineAfterTab(cases.map(\.typed))
        #expect(lines.count == cases.count, "one line per case: \(lines)")
        for (testCase, line) in zip(cases, lines) {
            #expect(line == testCase.expected, "bash: `\(testCase.typed)` + TAB gives `\(line)`")
        }
    }

    @Test(arguments: ["bash", "zsh", "fish"])
    func everyCommandOptionAndValueCompletes(shell: String) throws {
        try TestRequirement.check(.tool("/usr/bin/zsh"), .tool("/usr/bin/fish"))
        let shells = try Shells()
        let cases = cases(config: shells.fixture.config)
        let offered = try shells.complete(shell, cases.map(\.line))
        #expect(offered.count == cases.count, "one answer per line")
        for (testCase, got) in zip(cases, offered) {
            // Shells may show what they add after the word (`with:bob…`), so compare by suffix of the typed word.
            #expect(!got.contains { $0.contains("⏎") }, "\(shell): `\(testCase.line.joined(separator: " "))` offers candidates joined by newlines: \(got)")
            let missing = testCase.expected.filter { word in !got.contains { $0 == word || $0.hasSuffix(":" + word) || $0.hasSuffix(word) } }
            #expect(missing.isEmpty, "\(shell): `\(testCase.line.joined(separator: " "))` does not offer \(missing); it offers \(got)")
        }
    }

    @Test func theCommittedScriptsAreTheGeneratedOnes() throws {
        let repository = EverydayCLITests.repository
        for (shell, file) in [("bash", "roost.bash"), ("zsh", "_roost"), ("fish", "roost.fish")] {
            let generated = try RoostBinary.run(["completions", shell]).stdout
            let committed = try String(contentsOfFile: repository + "/contrib/completions/" + file, encoding: .utf8)
            #expect(committed == generated, "contrib/completions/\(file) is stale: run contrib/scripts/make-completions")
        }
    }
}

extension String {
    /// Appends the text to the file at `path` (a fixture's config gains a group, keeping its mode).
    func appendLine(to path: String) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(utf8))
    }
}
