import Testing
@testable import roost
import RoostCore

@Suite("CLI dispatch and help")
struct CLIParserDispatchTests {
    @Test func versionPrintsAndSucceeds() async {
        let run = await CLIRun.run(["--version"])
        #expect(run.status == .ok)
        #expect(run.stdout == "roost \(RoostVersion.string)\n")
    }

    @Test func rootHelpListsCommandsAndEveryGlobalOption() async {
        let run = await CLIRun.run(["--help"])
        #expect(run.status == .ok)
        #expect(run.stdout.contains("search"))
        #expect(run.stdout.contains("find messages"))
        for spec in GlobalOptions.specs {
            #expect(run.stdout.contains(spec.synopsis), "missing \(spec.synopsis)")
        }
    }

    @Test func noArgumentsShowsHelpOnStderrWithUsageStatus() async {
        let run = await CLIRun.run([])
        #expect(run.status == .usage)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.contains("Usage: roost"))
    }

    @Test(arguments: [["search", "--help"], ["help", "search"], ["--help", "search"]])
    func commandHelpContainsEveryOptionAligned(arguments: [String]) async {
        let run = await CLIRun.run(arguments)
        #expect(run.status == .ok)
        #expect(run.stdout.contains("Usage: roost search [options] QUERY..."))
        let specs = FakeSearchCommand.options + GlobalOptions.specs
        let column = 2 + specs.map(\.synopsis.count).max()! + 2
        let lines = run.stdout.split(separator: "\n").map { Array($0) }
        for spec in specs {
            let line = lines.first { String($0).hasPrefix("  " + spec.synopsis + " ") } ?? []
            #expect(!line.isEmpty, "missing \(spec.synopsis)")
            // Every option has a description, so its line reaches past the column.
            #expect(line.count > column, "\(spec.synopsis): no description after column \(column)")
            #expect(line.count > column && line[column - 1] == " " && line[column] != " ",
                    "\(spec.synopsis): description not at column \(column)")
        }
    }

    @Test func unknownOptionExitsWithUsageAndPointsAtHelp() async {
        let run = await CLIRun.run(["search", "--x"])
        #expect(run.status == .usage)
        #expect(run.stderr == "roost: error: unknown option --x for `roost search`; see `roost search --help`\n")
    }

    @Test func unknownCommandSuggestsACloseOne() async {
        let run = await CLIRun.run(["serch"])
        #expect(run.status == .usage)
        #expect(run.stderr.contains("unknown command `serch` (did you mean `search`?)"))
        #expect(await CLIRun.run(["help", "nope"]).status == .usage)
    }

    @Test func globalOptionsWorkBeforeAndAfterTheCommand() async {
        let run = await CLIRun.run(["-v", "--config", "/c.ini", "search", "--json", "-v", "-n", "2", "-g", "x", "-g", "y", "hi"])
        #expect(run.status == .ok)
        #expect(run.stdout == #"{"limit":2,"groups":["x","y"],"order":"newest","highlight":false,"query":["hi"],"json":true,"verbosity":2,"config":"/c.ini"}"# + "\n")
    }

    @Test func commandStatusIsReturned() async {
        #expect(await CLIRun.run(["search"]).status == .nothingFound)
        let invalid = await CLIRun.run(["search", "--limit", "0"])
        #expect(invalid.status == .usage)
        #expect(invalid.stderr.hasPrefix("roost: error: invalid value '0' for --limit"))
    }

    @Test func configErrorsExitWithConfigStatus() async {
        let run = await CLIRun.run(["--config", "/nonexistent/roost.ini", "config"], commands: [ConfigCommand.self])
        #expect(run.status == .config)
        #expect(run.stderr == "roost: error: config file /nonexistent/roost.ini (from --config) does not exist\n")
    }

    @Test func failuresCarryTheirOwnStatus() async {
        struct Offline: CommandFailure {
            var exitCode: ExitCode { .connection }
            var description: String { "cannot reach example.org" }
        }
        struct Failing: Command {
            static let name = "connect"
            static let summary = "fail to connect"
            static let options: [OptionSpec] = []
            init(parsed: ParsedArguments) throws(UsageError) {}
            func run(context: CommandContext) async throws -> ExitCode { throw Offline() }
        }
        let run = await CLIRun.run(["connect"], commands: [Failing.self])
        #expect(run.status == .connection)
        #expect(run.stderr == "roost: error: cannot reach example.org\n")
    }
}
