import RoostCore

/// Runs a program per notification: the event in `ROOST_*` environment variables and as JSON on stdin.
/// The program is started directly, never through a shell, so message text is never interpreted.
struct CommandSink: NotificationSink {
    let name: String
    let typeName = "command"
    let argv: [String]
    let timeoutSeconds: Int

    func deliver(_ notification: OutgoingNotification) async throws(NotifyError) {
        let program = argv.first ?? ""
        let outcome = await ProcessRunner.run(argv: argv, extraEnvironment: NotificationPayload.environment(notification),
                                              input: .data(NotificationPayload.json(notification)), output: .discard,
                                              timeout: .seconds(timeoutSeconds))
        if let failure = outcome.launchFailure { throw .commandFailed(program: program, detail: failure) }
        if outcome.timedOut { throw .timedOut(sink: name, seconds: timeoutSeconds) }
        if outcome.status != 0 { throw .commandFailed(program: program, detail: "exited with status \(outcome.status)") }
    }
}
