import Foundation
import RoostAgent
import RoostCore

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
        with backoff (also when roost runs short of file descriptors or memory). Once an account has logged in, \
        nothing ends roost run: when its password or certificate is refused, or its password_command fails or \
        hangs, it waits for you (`roost status`: waiting, with the cause and the next try; one notification, \
        event `account`), trying again after about a minute, then less often up to hourly, and at once on \
        SIGHUP. Only when every account is refused before any has logged in (a wrong config) does roost exit \
        with status 78. Another client with the same resource replacing the session 3 times in a row makes \
        that account wait for SIGHUP. SIGHUP \
        (`systemctl --user reload roost`) also reads the config again without a restart: accounts added, \
        removed, disabled or changed are started, stopped (after committing what they received) or \
        restarted, and the notification rules and sinks are replaced; a config with errors is logged and \
        the running one kept. At the default level it logs, at most once a minute, how many messages it \
        archived; a first catch-up shows its progress (one line redrawn on a terminal, every 10 % in a log). SIGTERM or \
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
        let log = Logger(level: level, terminal: context.output.standardErrorIsTTY)
        var selected = config
        if let only = context.options.account {
            selected.accounts = config.accounts.filter { $0.jid.caseInsensitiveCompare(only) == .orderedSame }
        }
        let signals = SignalWatcher()
        DescriptorLimit.raise()
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
        let web = await ServeCommand.startInAgent(config: config, context: context, writer: agent.writer, log: log)
        agent.webView = web?.0.baseURL
        ServiceNotifier.notify("READY=1\nSTATUS=archiving \(Counted.noun(agent.accountCount, "account"))", environment: context.environment)
        // SIGHUP reads the same file again, for the same --account.
        let explicitPath = context.options.configPath
        let environment = context.environment
        let only = context.options.account
        let ending = await agent.run(signals: signals.signals) {
            var config = try RoostConfig.load(explicitPath: explicitPath, environment: environment)
            if let only { config.accounts = config.accounts.filter { $0.jid.caseInsensitiveCompare(only) == .orderedSame } }
            return config
        }
        if let (server, file) = web {
            await server.stop()
            try? FileManager.default.removeItem(atPath: file)
        }
        ServiceNotifier.notify("STOPPING=1", environment: context.environment)
        return ending == .everyAccountFailed ? .config : .ok
    }
}
