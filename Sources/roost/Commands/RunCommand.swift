import Foundation
import RoostAgent

/// `roost run`: the agent in the foreground until SIGTERM/SIGINT.
struct RunCommand: Command {
    static let name = "run"
    static let summary = "connect every enabled account and archive everything until stopped"
    static let usage = "[options]"
    static let discussion = """
        Runs in the foreground and logs to stderr (systemd --user does the backgrounding; see \
        contrib/systemd/roost.service). Every enabled account connects concurrently at priority -1, so \
        messages keep going to your real clients; message carbons and the server archive bring everything \
        you send and receive elsewhere into the local archive. An account that fails to connect is retried \
        with backoff; an account whose password or certificate is refused waits for you (it tries again hourly, \
        and at once on SIGHUP). When every account waits for you, roost exits with status 78. SIGTERM or \
        SIGINT: everything received is committed, unavailable presence is sent, the stream and the archive \
        are closed, and roost exits 0.
        """
    static let options: [OptionSpec] = []

    init(parsed: ParsedArguments) throws(UsageError) {
        try parsed.requireNoPositionals()
    }

    func run(context: CommandContext) async throws -> ExitCode {
        let config = try context.loadConfig()
        _ = try context.selectedAccounts(in: config)
        let level = context.options.effectiveLogLevel(configured: config.logLevel, commandDefault: .info)
        let log = Logger(level: level)
        var selected = config
        if let only = context.options.account {
            selected.accounts = config.accounts.filter { $0.jid.caseInsensitiveCompare(only) == .orderedSame }
        }
        let signals = SignalWatcher()
        // The control socket first: a second agent must refuse before it opens the archive or logs in.
        let control = try ControlServer.bind(path: ControlSocketPath.resolve(environment: context.environment))
        defer { control.stop() }
        let agent = try Agent(config: selected, settings: AgentSettings(config: config), log: log)
        if agent.accountCount == 0 {
            log.error("no account could be started")
            return .config
        }
        control.start(dispatcher: ControlDispatcher(handle: agent, config: selected))
        log.info("control socket: \(control.path)")
        let web = await ServeCommand.startInAgent(config: config, context: context, log: log)
        ServiceNotifier.notify("READY=1\nSTATUS=archiving \(agent.accountCount) account(s)", environment: context.environment)
        let ending = await agent.run(signals: signals.signals)
        if let (server, file) = web {
            await server.stop()
            try? FileManager.default.removeItem(atPath: file)
        }
        ServiceNotifier.notify("STOPPING=1", environment: context.environment)
        return ending == .everyAccountFailed ? .config : .ok
    }
}
