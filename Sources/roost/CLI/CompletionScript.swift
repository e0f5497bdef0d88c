import RoostArchive

/// Shell completions generated from the commands' own option and argument specs, so they cannot go stale:
/// `roost completions bash|zsh|fish`. The three scripts share one design: find the command among the words
/// typed so far (skipping global options and their values), then complete an option, an option's value, a
/// subcommand or a positional argument by its kind. Contacts, pending requesters, accounts and sinks are
/// asked of `roost completions words KIND` (the archive and config as they are now), with the `--config`
/// typed on the line.
struct CompletionScript {
    let commands: [any Command.Type]

    /// The words `roost help` completes to, besides the commands.
    private var commandNames: [String] { commands.map { $0.name } + ["help"] }

    // MARK: The model, shell-independent

    /// What a positional argument at `index` (1-based, after the command) is, given the first positional
    /// (the subcommand, when the command has subcommands).
    private func kinds(of command: any Command.Type) -> (first: ArgumentKind?, bySubcommand: [String: [ArgumentKind]], rest: [ArgumentKind]) {
        guard let first = command.arguments.first else { return (nil, [:], []) }
        if case .subcommands(let subs) = first {
            var table: [String: [ArgumentKind]] = [:]
            for sub in subs { table[sub.name] = sub.arguments }
            return (first, table, Array(command.arguments.dropFirst()))
        }
        return (nil, [:], command.arguments)
    }

    /// A kind as the scripts name it: `words:a b c`, `file`, `contact`, `query`, … ("" for nothing).
    private func token(_ kind: ArgumentKind) -> String {
        switch kind {
        case .none, .text: ""
        case .choices(let words): "words:" + words.joined(separator: " ")
        case .file: "file"
        case .directory: "directory"
        case .query: "query"
        case .contact: "contacts"
        case .pendingRequest: "requests"
        case .account: "accounts"
        case .sink: "sinks"
        case .subcommands(let subs): "words:" + subs.map(\.name).joined(separator: " ")
        }
    }

    /// The kind token of positional `index` in `list` (the last one repeats).
    private func token(in list: [ArgumentKind], at index: Int) -> String {
        guard !list.isEmpty else { return "" }
        return token(list[min(index, list.count) - 1])
    }

    private func options(of command: (any Command.Type)?) -> [OptionSpec] {
        GlobalOptions.specs + (command?.options ?? [])
    }

    private static func shellQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// Per command: `case` arms (in the shell's syntax) deciding the current positional's kind from
    /// `$sub` (the first positional) and `$index`. Shared by bash and zsh, whose `case` and `(( ))` agree.
    private func posixKindFunction(name: String) -> String {
        var text = "\(name)() {\n    # $1: the command, $2: its first positional argument, $3: the number of the one being typed\n"
        text += "    local sub=$2 index=$3\n    case $1 in\n"
        for command in commands where !command.arguments.isEmpty {
            text += "        \(command.name))\n"
            let (first, subs, rest) = kinds(of: command)
            if let first {
                let queryToo = command.takesQuery ? " query" : ""
                text += "            if ((index == 1)); then echo \(Self.shellQuoted(token(first) + queryToo)); return; fi\n"
                text += "            case $sub in\n"
                for (sub, list) in subs.sorted(by: { $0.key < $1.key }) where !list.isEmpty {
                    text += "                \(sub)) \(posixChain(list, offset: 1));;\n"
                }
                if !rest.isEmpty { text += "                *) \(posixChain(rest, offset: 1));;\n" }
                text += "            esac ;;\n"
            } else {
                text += "            \(posixChain(rest, offset: 0)) ;;\n"
            }
        }
        text += "    esac\n}\n"
        return text
    }

    /// `if ((index - offset == 1)); then echo A; else echo B; fi` over a list whose last kind repeats.
    private func posixChain(_ list: [ArgumentKind], offset: Int) -> String {
        if list.count == 1 { return "echo \(Self.shellQuoted(token(list[0])))" }
        var parts: [String] = []
        for (number, kind) in list.enumerated().dropLast() {
            parts.append("((index - \(offset) == \(number + 1))) && { echo \(Self.shellQuoted(token(kind))); return; }")
        }
        parts.append("echo \(Self.shellQuoted(token(list.last!)))")
        return parts.joined(separator: "; ")
    }

    /// `case` arms naming, per command, the options that take a value (short and long), so the words
    /// after them are skipped when counting positionals.
    private func posixValueOptionFunction(name: String) -> String {
        var text = "\(name)() {\n    # true when option $2 of command $1 (\"\" before the command) takes a value\n    case \"$1 $2\" in\n"
        let global = GlobalOptions.specs.filter(\.takesValue)
        let globalPatterns = global.flatMap { spec in ["*\" --\(spec.long)\""] + (spec.short.map { ["*\" -\($0)\""] } ?? []) }
        if !globalPatterns.isEmpty { text += "        " + globalPatterns.joined(separator: "|") + ") return 0 ;;\n" }
        for command in commands {
            let own = command.options.filter(\.takesValue)
            let patterns = own.flatMap { spec in ["\"\(command.name) --\(spec.long)\""] + (spec.short.map { ["\"\(command.name) -\($0)\""] } ?? []) }
            if !patterns.isEmpty { text += "        " + patterns.joined(separator: "|") + ") return 0 ;;\n" }
        }
        text += "    esac\n    return 1\n}\n"
        return text
    }

    /// Per command (and "" for before one): the kind token of each value-taking option's value.
    private func posixValueKindFunction(name: String) -> String {
        var text = "\(name)() {\n    # the kind of the value of option $2 of command $1\n    case \"$1 $2\" in\n"
        func arms(_ command: String, _ specs: [OptionSpec]) {
            for spec in specs where spec.takesValue {
                let kind = token(spec.completion)
                guard !kind.isEmpty else { continue }
                var patterns = ["\"\(command) --\(spec.long)\""]
                if let short = spec.short { patterns.append("\"\(command) -\(short)\"") }
                text += "        " + patterns.joined(separator: "|") + ") echo \(Self.shellQuoted(kind)) ;;\n"
            }
        }
        for command in commands { arms(command.name, command.options) }
        for spec in GlobalOptions.specs where spec.takesValue {
            let kind = token(spec.completion)
            guard !kind.isEmpty else { continue }
            var patterns = ["*\" --\(spec.long)\""]
            if let short = spec.short { patterns.append("*\" -\(short)\"") }
            text += "        " + patterns.joined(separator: "|") + ") echo \(Self.shellQuoted(kind)) ;;\n"
        }
        text += "    esac\n}\n"
        return text
    }

    private var queryWords: [String] { QueryVocabulary.filters.map { $0 + ":" } }

    private static let header = """
        # Generated by `roost completions %SHELL%` from roost's own commands and options: regenerate it rather
        # than edit it (contrib/scripts/make-completions). Contacts, requests, accounts and sinks are looked up
        # with `roost completions words KIND` when completing.

        """

    // MARK: bash

    func bash() -> String {
        var text = "# bash completion for roost(1). Install: copy to /usr/share/bash-completion/completions/roost, or source it.\n"
        text += Self.header.replacingOccurrences(of: "%SHELL%", with: "bash")
        text += """
            _roost_words() {
                local config=() i
                for ((i = 1; i < ${#COMP_WORDS[@]} - 1; i++)); do
                    [[ ${COMP_WORDS[i]} == --config ]] && config=(--config "${COMP_WORDS[i + 1]}")
                done
                "${COMP_WORDS[0]}" completions words "$1" "${config[@]}" 2>/dev/null
            }

            # Completes `cur` as a value of kind $1. compgen prints one candidate a line, so the default IFS
            # (space, tab, newline) splits both a `-W` word list and compgen's output; lists that may hold
            # spaces (contacts, files) are split at newlines only.
            _roost_complete_kind() {
                local kind=$1 cur=$2 key= IFS=$' \t\n'
                case $kind in
                    words:*\\ query|query)
                        # With ':' in COMP_WORDBREAKS, `with:bo` arrives as `with` `:` `bo`.
                        if [[ $cur == : ]]; then key=${COMP_WORDS[COMP_CWORD - 1]}; cur=
                        elif [[ ${COMP_WORDS[COMP_CWORD - 1]} == : ]]; then key=${COMP_WORDS[COMP_CWORD - 2]}
                        elif [[ $cur == *:* ]]; then key=${cur%%:*}; cur=${cur#*:}
                        fi
                        case $key in
            \(QueryVocabulary.nameFilters.joined(separator: "|"))) IFS=$'\\n'; COMPREPLY=($(compgen -W "$(_roost_words contacts)" -- "$cur")); return ;;
                            account) IFS=$'\\n'; COMPREPLY=($(compgen -W "$(_roost_words accounts)" -- "$cur")); return ;;
                            is) COMPREPLY=($(compgen -W '\(QueryVocabulary.values["is"]!.joined(separator: " "))' -- "$cur")); return ;;
                            has) COMPREPLY=($(compgen -W '\(QueryVocabulary.values["has"]!.joined(separator: " "))' -- "$cur")); return ;;
                            ?*) return ;;
                        esac
                        local words='\(queryWords.joined(separator: " "))' extra=${kind#words:}
                        [[ $kind == words:* ]] && words="${extra% query} $words"
                        COMPREPLY=($(compgen -W "$words" -- "$cur"))
                        [[ ${COMPREPLY[*]} == *: ]] && compopt -o nospace 2>/dev/null ;;
                    words:*) COMPREPLY=($(compgen -W "${kind#words:}" -- "$cur")) ;;
                    file) IFS=$'\\n'; compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")) ;;
                    directory) IFS=$'\\n'; compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "$cur")) ;;
                    contacts|requests|accounts|sinks) IFS=$'\\n'; COMPREPLY=($(compgen -W "$(_roost_words "$kind")" -- "$cur")) ;;
                esac
            }


            """
        text += posixValueOptionFunction(name: "_roost_takes_value") + "\n"
        text += posixValueKindFunction(name: "_roost_value_kind") + "\n"
        text += posixKindFunction(name: "_roost_positional_kind") + "\n"
        text += "_roost_options() {\n    case $1 in\n"
        for command in commands {
            let words = options(of: command).flatMap { ["--\($0.long)"] + ($0.short.map { ["-\($0)"] } ?? []) }
            text += "        \(command.name)) echo \(Self.shellQuoted(words.joined(separator: " "))) ;;\n"
        }
        let globals = GlobalOptions.specs.flatMap { ["--\($0.long)"] + ($0.short.map { ["-\($0)"] } ?? []) }
        text += "        *) echo \(Self.shellQuoted(globals.joined(separator: " "))) ;;\n    esac\n}\n\n"
        text += """
            _roost() {
                local cur=${COMP_WORDS[COMP_CWORD]} prev= command= first= index=0 i word skip= IFS=$' \t\n'
                ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
                COMPREPLY=()
                for ((i = 1; i < COMP_CWORD; i++)); do
                    word=${COMP_WORDS[i]}
                    if [[ -n $skip ]]; then skip=; continue; fi
                    if [[ $word == -* && $word != - ]]; then
                        _roost_takes_value "$command" "$word" && skip=1
                        continue
                    fi
                    if [[ -z $command ]]; then command=$word
                    else
                        ((index++))
                        ((index == 1)) && first=$word
                    fi
                done
                if [[ -n $skip ]]; then
                    _roost_complete_kind "$(_roost_value_kind "$command" "$prev")" "$cur"
                    return
                fi
                if [[ $cur == -* ]]; then
                    COMPREPLY=($(compgen -W "$(_roost_options "$command")" -- "$cur"))
                    return
                fi
                if [[ -z $command ]]; then
                    COMPREPLY=($(compgen -W '\(commandNames.joined(separator: " "))' -- "$cur"))
                    return
                fi
                if [[ $command == help ]]; then
                    ((index == 0)) && COMPREPLY=($(compgen -W '\(commandNames.joined(separator: " "))' -- "$cur"))
                    return
                fi
                _roost_complete_kind "$(_roost_positional_kind "$command" "$first" $((index + 1)))" "$cur"
            }
            complete -F _roost roost

            """
        return text
    }

    // MARK: zsh

    func zsh() -> String {
        var text = "#compdef roost\n# zsh completion for roost(1). Install: copy as _roost into a folder of $fpath.\n"
        text += Self.header.replacingOccurrences(of: "%SHELL%", with: "zsh")
        text += """
            _roost_words() {
                local -a config
                local i
                for ((i = 2; i < CURRENT; i++)); do
                    [[ $words[i] == --config ]] && config=(--config $words[i+1])
                done
                $words[1] completions words $1 $config 2>/dev/null
            }

            # Completes the current word as a value of kind $1.
            _roost_complete_kind() {
                local kind=$1
                local -a found
                case $kind in
                    (words:*\\ query|query)
                        if compset -P '(\(QueryVocabulary.nameFilters.joined(separator: "|"))):'; then
                            found=(${(f)"$(_roost_words contacts)"}); compadd -a found
                        elif compset -P 'account:'; then
                            found=(${(f)"$(_roost_words accounts)"}); compadd -a found
                        elif compset -P 'is:'; then compadd \(QueryVocabulary.values["is"]!.joined(separator: " "))
                        elif compset -P 'has:'; then compadd \(QueryVocabulary.values["has"]!.joined(separator: " "))
                        elif [[ $PREFIX != *:* ]]; then
                            [[ $kind == words:* ]] && { found=(${=${${kind#words:}% query}}); compadd -a found }
                            compadd -S '' \(queryWords.joined(separator: " "))
                        fi ;;
                    (words:*) found=(${=${kind#words:}}); compadd -a found ;;
                    (file) _files ;;
                    (directory) _files -/ ;;
                    (contacts|requests|accounts|sinks) found=(${(f)"$(_roost_words $kind)"}); compadd -a found ;;
                esac
            }


            """
        text += posixValueOptionFunction(name: "_roost_takes_value") + "\n"
        text += posixValueKindFunction(name: "_roost_value_kind") + "\n"
        text += posixKindFunction(name: "_roost_positional_kind") + "\n"
        text += "_roost_options() {\n    local -a described\n    case $1 in\n"
        func described(_ specs: [OptionSpec]) -> String {
            specs.flatMap { spec -> [String] in
                let help = spec.help.replacingOccurrences(of: "'", with: "'\\''")
                return ["'--\(spec.long):\(help)'"] + (spec.short.map { ["'-\($0):\(help)'"] } ?? [])
            }.joined(separator: " ")
        }
        for command in commands {
            text += "        (\(command.name)) described=(\(described(options(of: command)))) ;;\n"
        }
        text += "        (*) described=(\(described(GlobalOptions.specs))) ;;\n    esac\n"
        text += "    _describe -t options option described\n}\n\n"
        let describedCommands = commands.map { "'\($0.name):\($0.summary.replacingOccurrences(of: "'", with: "'\\''").replacingOccurrences(of: ":", with: "\\:"))'" }
            + ["'help:show help for a command'"]
        text += """
            _roost() {
                local command= first= word skip= i
                local -i index=0
                for ((i = 2; i < CURRENT; i++)); do
                    word=$words[i]
                    if [[ -n $skip ]]; then skip=; continue; fi
                    if [[ $word == -* && $word != - ]]; then
                        _roost_takes_value "$command" "$word" && skip=1
                        continue
                    fi
                    if [[ -z $command ]]; then command=$word
                    else
                        ((index++))
                        ((index == 1)) && first=$word
                    fi
                done
                if [[ -n $skip ]]; then
                    _roost_complete_kind "$(_roost_value_kind "$command" "$words[CURRENT-1]")"
                    return
                fi
                if [[ $PREFIX == -* ]]; then
                    _roost_options "$command"
                    return
                fi
                local -a commands
                commands=(\(describedCommands.joined(separator: " ")))
                if [[ -z $command || ( $command == help && $index -eq 0 ) ]]; then
                    _describe -t commands 'roost command' commands
                    return
                fi
                [[ $command == help ]] && return
                _roost_complete_kind "$(_roost_positional_kind "$command" "$first" $((index + 1)))"
            }

            if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
                _roost "$@"
            else
                compdef _roost roost
            fi

            """
        return text
    }

    // MARK: fish

    func fish() -> String {
        var text = "# fish completion for roost(1). Install: copy to ~/.config/fish/completions/roost.fish\n"
        text += Self.header.replacingOccurrences(of: "%SHELL%", with: "fish")
        text += """
            function __roost_words
                set -l tokens (commandline -opc)
                set -l config
                set -l i (contains -i -- --config $tokens)
                and set config --config $tokens[(math $i + 1)]
                $tokens[1] completions words $argv[1] $config 2>/dev/null
            end

            # Prints what the current token may become, for a value of kind $argv[1].
            function __roost_complete_kind
                set -l kind $argv[1]
                set -l current (commandline -ct)
                switch $kind
                    case 'query' 'words:* query'
                        set -l key (string match -r '^([a-z]+):' -- $current)[2]
                        switch "$key"
                            case \(QueryVocabulary.nameFilters.joined(separator: " "))
                                for word in (__roost_words contacts); echo "$key:$word"; end
                            case account
                                for word in (__roost_words accounts); echo "account:$word"; end
                            case is
                                for word in \(QueryVocabulary.values["is"]!.joined(separator: " ")); echo "is:$word"; end
                            case has
                                for word in \(QueryVocabulary.values["has"]!.joined(separator: " ")); echo "has:$word"; end
                            case ''
                                string match -q 'words:*' -- $kind; and string split ' ' -- (string replace -r '^words:(.*) query$' '$1' -- $kind)
                                printf '%s\\n' \(queryWords.joined(separator: " "))
                        end
                    case 'words:*'
                        string split ' ' -- (string replace 'words:' '' -- $kind)
                    case file directory
                        __fish_complete_path $current
                    case contacts requests accounts sinks
                        __roost_words $kind
                end
            end


            """
        // Value-taking options and their kinds, as fish `switch` arms.
        text += "function __roost_takes_value\n    switch \"$argv[1] $argv[2]\"\n"
        let globalValues = GlobalOptions.specs.filter(\.takesValue).flatMap { spec in ["'* --\(spec.long)'"] + (spec.short.map { ["'* -\($0)'"] } ?? []) }
        if !globalValues.isEmpty { text += "        case \(globalValues.joined(separator: " "))\n            return 0\n" }
        for command in commands {
            let own = command.options.filter(\.takesValue).flatMap { spec in
                ["'\(command.name) --\(spec.long)'"] + (spec.short.map { ["'\(command.name) -\($0)'"] } ?? [])
            }
            if !own.isEmpty { text += "        case \(own.joined(separator: " "))\n            return 0\n" }
        }
        text += "    end\n    return 1\nend\n\n"
        text += "function __roost_value_kind\n    switch \"$argv[1] $argv[2]\"\n"
        for command in commands {
            for spec in command.options where spec.takesValue && !token(spec.completion).isEmpty {
                let patterns = ["'\(command.name) --\(spec.long)'"] + (spec.short.map { ["'\(command.name) -\($0)'"] } ?? [])
                text += "        case \(patterns.joined(separator: " "))\n            echo \(Self.shellQuoted(token(spec.completion)))\n"
            }
        }
        for spec in GlobalOptions.specs where spec.takesValue && !token(spec.completion).isEmpty {
            let patterns = ["'* --\(spec.long)'"] + (spec.short.map { ["'* -\($0)'"] } ?? [])
            text += "        case \(patterns.joined(separator: " "))\n            echo \(Self.shellQuoted(token(spec.completion)))\n"
        }
        text += "    end\nend\n\n"
        text += "function __roost_positional_kind\n    set -l sub $argv[2]\n    set -l index $argv[3]\n    switch $argv[1]\n"
        func chain(_ list: [ArgumentKind], offset: Int, indent: String) -> String {
            var out = ""
            for (number, kind) in list.enumerated().dropLast() {
                out += "\(indent)if test (math $index - \(offset)) -eq \(number + 1)\n\(indent)    echo \(Self.shellQuoted(token(kind)))\n\(indent)    return\n\(indent)end\n"
            }
            if let last = list.last { out += "\(indent)echo \(Self.shellQuoted(token(last)))\n" }
            return out
        }
        for command in commands where !command.arguments.isEmpty {
            text += "        case \(command.name)\n"
            let (first, subs, rest) = kinds(of: command)
            if let first {
                text += "            if test $index -eq 1\n                echo \(Self.shellQuoted(token(first) + (command.takesQuery ? " query" : "")))\n                return\n            end\n"
                text += "            switch \"$sub\"\n"
                for (sub, list) in subs.sorted(by: { $0.key < $1.key }) where !list.isEmpty {
                    text += "                case \(sub)\n" + chain(list, offset: 1, indent: "                    ")
                }
                if !rest.isEmpty { text += "                case '*'\n" + chain(rest, offset: 1, indent: "                    ") }
                text += "            end\n"
            } else {
                text += chain(rest, offset: 0, indent: "            ")
            }
        }
        text += "    end\nend\n\n"
        text += "function __roost_options\n    switch $argv[1]\n"
        func described(_ specs: [OptionSpec]) -> String {
            specs.flatMap { spec -> [String] in
                let help = spec.help.replacingOccurrences(of: "'", with: "\\'")
                return ["'--\(spec.long)\t\(help)'"] + (spec.short.map { ["'-\($0)\t\(help)'"] } ?? [])
            }.joined(separator: " ")
        }
        for command in commands {
            text += "        case \(command.name)\n            printf '%s\\n' \(described(options(of: command)))\n"
        }
        text += "        case '*'\n            printf '%s\\n' \(described(GlobalOptions.specs))\n    end\nend\n\n"
        let describedCommands = commands.map { "'\($0.name)\t\($0.summary.replacingOccurrences(of: "'", with: "\\'"))'" } + ["'help\tshow help for a command'"]
        text += """
            function __roost_complete
                set -l tokens (commandline -opc)
                set -l current (commandline -ct)
                set -l command
                set -l first
                set -l index 0
                set -l skip 0
                for word in $tokens[2..-1]
                    if test $skip -eq 1
                        set skip 0
                        continue
                    end
                    if string match -q -- '-?*' $word
                        __roost_takes_value "$command" $word; and set skip 1
                        continue
                    end
                    if test -z "$command"
                        set command $word
                    else
                        set index (math $index + 1)
                        test $index -eq 1; and set first $word
                    end
                end
                if test $skip -eq 1
                    __roost_complete_kind (__roost_value_kind "$command" $tokens[-1])
                    return
                end
                if string match -q -- '-*' $current
                    __roost_options "$command"
                    return
                end
                if test -z "$command"; or begin; test "$command" = help; and test $index -eq 0; end
                    printf '%s\\n' \(describedCommands.joined(separator: " "))
                    return
                end
                test "$command" = help; and return
                __roost_complete_kind (__roost_positional_kind $command "$first" (math $index + 1))
            end

            complete -c roost -f -a '(__roost_complete)'

            """
        return text
    }
}
