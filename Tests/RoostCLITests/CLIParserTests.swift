import Testing
@testable import roost

@Suite("CLI argument parser")
struct CLIParserTests {
    let parser = ArgumentParser(command: "roost search", specs: GlobalOptions.specs + FakeSearchCommand.options)

    private func parse(_ arguments: [String]) throws(UsageError) -> ParsedArguments {
        try parser.parse(arguments[...]).parsed
    }

    @Test func flagsValuesAndPositionals() throws {
        let parsed = try parse(["--json", "--limit", "5", "hello", "-H", "world"])
        #expect(parsed.flag("json"))
        #expect(parsed.flag("highlight"))
        #expect(!parsed.flag("quiet"))
        #expect(parsed.value("limit") == "5")
        #expect(parsed.positionals == ["hello", "world"])
    }

    @Test func equalsFormAndAttachedShortValue() throws {
        let parsed = try parse(["--limit=7", "--config=/tmp/a=b.ini", "-gfriends"])
        #expect(parsed.value("limit") == "7")
        #expect(parsed.value("config") == "/tmp/a=b.ini")
        #expect(parsed.values("group") == ["friends"])
        #expect(try parse(["--order="]).value("order") == "")
    }

    @Test func clusteredShortFlagsAreCounted() throws {
        let parsed = try parse(["-vv", "-v", "-Hn", "3"])
        #expect(parsed.count("verbose") == 3)
        #expect(parsed.flag("highlight"))
        #expect(parsed.value("limit") == "3")
    }

    @Test func doubleDashEndsOptions() throws {
        let parsed = try parse(["--json", "--", "--limit", "-v", "-"])
        #expect(parsed.flag("json"))
        #expect(parsed.value("limit") == nil)
        #expect(parsed.positionals == ["--limit", "-v", "-"])
    }

    @Test func repeatableOptionsCollectEveryValue() throws {
        let parsed = try parse(["--group", "a", "-g", "b", "--group=c"])
        #expect(parsed.values("group") == ["a", "b", "c"])
    }

    @Test func singleValueOptionGivenTwiceIsAnError() {
        #expect(throws: UsageError("option --limit given more than once", command: "roost search")) {
            try parse(["--limit", "1", "-n", "2"])
        }
    }

    @Test func unknownOptionNamesTheCommandAndItsHelp() throws {
        #expect(throws: UsageError("unknown option --x for `roost search`", command: "roost search")) {
            try parse(["--x"])
        }
        #expect(throws: UsageError("unknown option -z for `roost search`", command: "roost search")) {
            try parse(["-vz"])
        }
        let error = UsageError("unknown option --x for `roost search`", command: "roost search")
        #expect(error.description == "unknown option --x for `roost search`; see `roost search --help`")
    }

    @Test func missingValueIsAnError() {
        #expect(throws: UsageError("missing value for --limit", command: "roost search")) {
            try parse(["--limit"])
        }
        #expect(throws: UsageError("missing value for --config", command: "roost search")) {
            try parse(["--config", "--json"])
        }
        #expect(throws: UsageError("missing value for -n", command: "roost search")) {
            try parse(["-n"])
        }
    }

    @Test func negativeNumbersAndDashAreValues() throws {
        #expect(try parse(["--limit", "-5"]).value("limit") == "-5")
        #expect(try parse(["--config", "-"]).value("config") == "-")
    }

    @Test func flagWithValueIsAnError() {
        #expect(throws: UsageError("option --json takes no value", command: "roost search")) {
            try parse(["--json=yes"])
        }
    }

    @Test func typedValuesAreCheckedWithRangesAndChoices() throws {
        #expect(try parse(["--limit", "10000"]).integer("limit", in: 1...10_000) == 10_000)
        #expect(try parse([]).integer("limit", in: 1...10) == nil)
        #expect(throws: UsageError("invalid value '0' for --limit: expected an integer from 1 to 10000", command: "roost search")) {
            try parse(["--limit", "0"]).integer("limit", in: 1...10_000)
        }
        #expect(throws: UsageError.self) { try parse(["--limit", "ten"]).integer("limit", in: 1...10) }
        #expect(try parse(["--order", "rank"]).choice("order", of: Order.self) == .rank)
        #expect(throws: UsageError("invalid value 'best' for --order: expected one of newest, oldest, rank", command: "roost search")) {
            try parse(["--order", "best"]).choice("order", of: Order.self)
        }
    }

    @Test func positionalHelpers() throws {
        #expect(try parse(["a@example.org"]).onePositional(named: "JID") == "a@example.org")
        #expect(throws: UsageError("missing JID for `roost search`", command: "roost search")) {
            try parse([]).onePositional(named: "JID")
        }
        #expect(throws: UsageError.self) { try parse(["a", "b"]).onePositional(named: "JID") }
        #expect(throws: UsageError.self) { try parse(["a"]).requireNoPositionals() }
    }

    @Test func rootParsingStopsAtTheCommandName() throws {
        let root = try ArgumentParser(command: "roost", specs: GlobalOptions.specs)
            .parse(["-v", "--config", "c.ini", "search", "--limit", "3"], stopAtFirstPositional: true)
        #expect(root.parsed.count("verbose") == 1)
        #expect(Array(root.remaining) == ["search", "--limit", "3"])
        #expect(throws: UsageError("unknown option --limit", command: "roost")) {
            try ArgumentParser(command: "roost", specs: GlobalOptions.specs).parse(["--limit", "3"], stopAtFirstPositional: true)
        }
    }

    @Test func globalOptionsAndLogLevel() throws {
        let options = try GlobalOptions(parsed: parse(["-vv", "--log-level", "warning", "--account", "a@b.c"]))
        #expect(options.account == "a@b.c")
        #expect(options.effectiveLogLevel(configured: .error, commandDefault: .info) == .debug)
        #expect(try GlobalOptions(parsed: parse([])).effectiveLogLevel(configured: nil, commandDefault: .info) == .info)
        #expect(try GlobalOptions(parsed: parse(["-v"])).effectiveLogLevel(configured: .error, commandDefault: .info) == .warning)
        #expect(try GlobalOptions(parsed: parse(["-q"])).effectiveLogLevel(configured: .debug, commandDefault: .info) == .error)
        #expect(throws: UsageError.self) { try GlobalOptions(parsed: parse(["-q", "-v"])) }
        #expect(throws: UsageError.self) { try GlobalOptions(parsed: parse(["--log-level", "loud"])) }
    }

    @Test func commandOptionsDoNotClashWithGlobalOnes() {
        let commands: [any Command.Type] = [ConfigCommand.self, FakeSearchCommand.self]
        for command in commands {
            let all = GlobalOptions.specs + command.options
            #expect(Set(all.map(\.long)).count == all.count, "\(command.name) repeats a long option")
            let shorts = all.compactMap(\.short)
            #expect(Set(shorts).count == shorts.count, "\(command.name) repeats a short option")
        }
    }
}
