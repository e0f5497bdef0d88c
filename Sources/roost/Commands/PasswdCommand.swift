import RoostAgent

/// `roost passwd`: changes the account's password on the server (XEP-0077).
struct PasswdCommand: Command {
    static let name = "passwd"
    static let summary = "change the account's password on the server"
    static let usage = "[options]"
    static let discussion = """
        Asks for the new password twice without echo (or takes the first line printed by --password-command) \
        and changes it on the server. Update the config's password or password_command afterwards: roost \
        does not edit the config file. Goes through the running agent; when none runs, roost logs in once \
        itself with the current password from the config.
        """
    static let options: [OptionSpec] = [
        .value("password-command", placeholder: "CMD", help: "run CMD (via /bin/sh) and use the first line it prints as the new password"),
    ]

    let passwordCommand: String?

    init(parsed: ParsedArguments) throws(UsageError) {
        try parsed.requireNoPositionals()
        passwordCommand = parsed.value("password-command")
    }

    func run(context: CommandContext) async throws -> ExitCode {
        let link = try AgentLink(context: context, command: "roost passwd")
        let password = try await NewPassword.obtain(command: passwordCommand, account: link.account.jid,
                                              prompt: "New password for \(link.account.jid)")
        let (done, route) = try await link.perform(PasswordChangeAction(newPassword: password))
        if context.options.json {
            context.output.jsonLine(["ok": true, "account": .string(link.account.jid), "via": .string(route.rawValue)])
        } else {
            context.output.line(done.message)
            context.output.note("update the password of [account \(link.account.jid)] in \(link.config.sourcePath ?? "the config") now")
        }
        return .ok
    }
}
