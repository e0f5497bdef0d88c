import Foundation
import RoostAgent

/// `roost unregister`: deletes the account on the server, after a confirmation.
struct UnregisterCommand: Command {
    static let name = "unregister"
    static let summary = "delete the account on its server (asks for confirmation)"
    static let usage = "[options]"
    static let discussion = """
        Deletes the account on the server (XEP-0077); its roster, vCard and server-side messages are lost. \
        Asks you to type the account's JID to confirm, unless --yes is given. The local archive is kept. \
        Goes through the running agent (which then stops retrying that account); when none runs, roost logs \
        in once itself.
        """
    static let options: [OptionSpec] = [
        .flag("yes", short: "y", help: "do not ask for confirmation"),
    ]

    struct NotConfirmed: CommandFailure {
        var exitCode: ExitCode { .nothingFound }
        var description: String { "not confirmed; the account was not deleted" }
    }

    let confirmed: Bool

    init(parsed: ParsedArguments) throws(UsageError) {
        try parsed.requireNoPositionals()
        confirmed = parsed.flag("yes")
    }

    func run(context: CommandContext) async throws -> ExitCode {
        let link = try AgentLink(context: context, command: "roost unregister")
        let jid = link.account.jid
        if !confirmed {
            let answer = try TerminalInput.line("This deletes \(jid) on the server for good. Type the JID to confirm: ")
            guard answer.trimmingCharacters(in: .whitespaces).lowercased() == jid else { throw NotConfirmed() }
        }
        let (done, route) = try await link.perform(UnregisterAction())
        if context.options.json {
            context.output.jsonLine(["ok": true, "account": .string(jid), "via": .string(route.rawValue)])
        } else {
            context.output.line(done.message)
            context.output.note("remove [account \(jid)] from \(link.config.sourcePath ?? "the config") (or set enabled = false)")
        }
        return .ok
    }
}
