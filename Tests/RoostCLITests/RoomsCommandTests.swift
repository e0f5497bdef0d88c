import Testing
@testable import roost

/// `roost rooms`: usage mistakes exit 2 before anything runs; without an archive there is nothing to list.
@Suite("CLI: roost rooms")
struct RoomsCommandTests {
    @Test(arguments: [["rooms", "frobnicate"], ["rooms", "join"], ["rooms", "leave", "a@b", "c@d"], ["rooms", "--nick", "x"],
                      ["rooms", "leave", "a@b", "--bookmark"], ["rooms", "join", "a@b", "--all"], ["rooms", "invites", "extra"]])
    func usageMistakesExitTwo(arguments: [String]) async {
        let run = await CLIRun.run(arguments, commands: [RoomsCommand.self])
        #expect(run.status == .usage, "\(arguments): \(run.stderr)")
        #expect(run.stderr.contains("roost: error:"))
    }

    @Test func helpNamesEverySubcommand() async {
        let run = await CLIRun.run(["rooms", "--help"], commands: [RoomsCommand.self])
        #expect(run.status == .ok)
        for word in ["join ROOM", "leave ROOM", "invites", "decline ROOM", "--password-command", "--bookmark", "--nick"] {
            #expect(run.stdout.contains(word), "\(word)")
        }
    }
}
