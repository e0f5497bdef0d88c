import Foundation
import RoostAgent
import RoostArchive
import RoostCore
import RoostServe

/// `roost serve`: the archive in a browser (conversations, search, live updates), on 127.0.0.1.
struct ServeCommand: Command {
    static let name = "serve"
    static let summary = "browse and search the archive in a web browser"
    static let usage = "[options]"
    static let discussion = """
        Serves a local web view of the archive: the conversation list, each conversation paged back through its \
        whole history, search with the query language of `roost search` (hits highlighted, each opens in its \
        conversation), chat-state and presence timelines, attachments and pictures stored locally, exports of a \
        conversation in any format, and new messages as they arrive while `roost run` archives them (corrections \
        and retractions change the messages already shown). The list shows unread counts, as `roost status` \
        counts them; viewing a conversation does not mark it read, its Mark read button does (as `roost read JID`). \
        It reads the archive through its own read-only connection, with or without the agent running. \
        It listens on 127.0.0.1 only, unless --listen names another address together with --allow-remote \
        (a warning is logged). \
        Each start makes a random access token: open the printed address (it carries the token; the browser then \
        keeps it as a cookie), or use --open, which hands it to your browser without putting the token on any \
        command line. `[serve] enabled = true` in the config serves the same view from `roost run`. \
        The buttons of push notifications (a webhook sink's `public_url`) are POSTs to /act/TOKEN, taken without \
        the view's access cookie: each link is signed by the agent, does its one action (Mark read, Accept, Deny) once, \
        through the running agent, and expires after 24 hours; reused, expired or forged links are refused (409, \
        410, 403), logged and counted. See docs/serve.md, "Push actions". \
        Stop with Ctrl-C. Exit status: 0 stopped, 1 no archive yet, 2 invalid command line, 70 cannot listen.
        """
    static let options: [OptionSpec] = [
        .value("port", short: "p", placeholder: "N", help: "port to listen on (default 8765; 0 picks a free one)"),
        .flag("open", help: "open the web view in the default browser"),
        .value("listen", placeholder: "ADDRESS", help: "IP address to listen on (default 127.0.0.1)"),
        .flag("allow-remote", help: "allow --listen on an address other machines can reach (read the warning)"),
        .values("allow-host", placeholder: "NAME", help: "also accept this host name in requests (with --allow-remote)"),
        .flag("utc", help: "times in UTC instead of the local time zone"),
    ]

    let port: UInt16?
    let open: Bool
    let listen: String?
    let allowRemote: Bool
    let allowHosts: [String]
    let utc: Bool

    init(parsed: ParsedArguments) throws(UsageError) {
        try parsed.requireNoPositionals()
        if let text = parsed.value("port") {
            guard let value = UInt16(text) else { throw UsageError("invalid value '\(text)' for --port: expected 0…65535", command: parsed.command) }
            port = value
        } else {
            port = nil
        }
        open = parsed.flag("open")
        listen = parsed.value("listen")
        allowRemote = parsed.flag("allow-remote")
        allowHosts = parsed.values("allow-host")
        utc = parsed.flag("utc")
        if let listen, !ServeOptions.isLoopback(listen), !allowRemote {
            throw UsageError("--listen \(listen) is not a loopback address: add --allow-remote to serve the archive to other machines",
                             command: parsed.command)
        }
    }

    func run(context: CommandContext) async throws -> ExitCode {
        let config = try context.loadConfig()
        guard FileManager.default.fileExists(atPath: config.archivePath) else { throw ArchiveMissing(path: config.archivePath) }
        let log = Logger(level: context.options.effectiveLogLevel(configured: config.logLevel, commandDefault: .info))
        DescriptorLimit.raise()
        var options = ServeOptions(archivePath: config.archivePath, log: ServeLog(log))
        options.host = listen ?? "127.0.0.1"
        options.port = port ?? ServeOptions.defaultPort
        options.allowRemote = allowRemote
        options.hostNames = allowHosts
        options.timeZone = utc ? TimeZone(identifier: "UTC")! : .current
        // Search keeps to the account `roost search` keeps to.
        options.account = try context.readingAccount(config: config, reader: try? ArchiveReader(path: config.archivePath))
        options.thumbnails = PixbufThumbnails()
        options.pushAction = Self.pushActions(archivePath: config.archivePath, environment: context.environment)
        let runtime = RuntimeFolder.path(environment: context.environment)
        func openBrowser(_ url: String) async {
            guard open, let warning = await ServeRuntimeFiles.open(url, folder: runtime) else { return }
            log.warning("could not open a browser (\(warning)); open the address above")
        }
        // Watching before listening: a stop request from then on ends in an orderly exit 0.
        let signals = SignalWatcher()
        let server: WebServer
        do {
            server = try await WebServer.start(options)
        } catch {
            // The port is taken, maybe by `roost run` serving the same archive: then that is the web view to use —
            // when the file saying so is this user's own (another user may have planted one in /tmp/roost-<uid>).
            if case .listen = error {
                do {
                    if let url = try ServeRuntimeFiles.readURL(folder: runtime), url.hasPrefix("http://"), url.contains(":\(options.port)/") {
                        context.output.line("Roost web view (served by roost run): \(url)")
                        await openBrowser(url)
                        return .ok
                    }
                } catch {
                    log.warning("\(error)")
                }
            }
            throw ServeFailure(message: error.description, exitCode: .internalError)
        }
        if !ServeOptions.isLoopback(options.host) {
            log.warning("serving on \(options.host): anyone who can reach this address and has the token can read the whole archive, "
                        + "and HTTP is not encrypted — use this only on a network you trust")
        }
        if context.options.json {
            context.output.jsonLine(["url": .string(server.url), "address": .string(server.baseURL)])
        } else {
            context.output.line("Roost web view: \(server.url)")
        }
        log.info("serving \(config.archivePath) at \(server.baseURL); stop with Ctrl-C")
        await openBrowser(server.url)
        for await signal in signals.signals where signal != SIGHUP { break }
        let counters = await server.counters()
        await server.stop()
        try? FileManager.default.removeItem(atPath: runtime + "/serve-open.html")
        log.info("stopped serving (\(counters.served) requests answered, \(counters.refused) refused; "
                 + "\(counters.connectionsRefused) connections refused over the limits, \(counters.connectionsTimedOut) closed without a whole request)")
        return .ok
    }
}

extension ServeCommand {
    /// `POST /act/TOKEN`, the buttons of push notifications (docs/serve.md, "Push actions"): the token is checked, then
    /// spent (`PushActionTokens`), then its one action runs through the running agent as `roost read --send` or `roost
    /// requests accept|deny` would. Without an agent a valid token is not spent: 503, try again once `roost run` runs.
    static func pushActions(archivePath: String, environment: [String: String]) -> @Sendable (String) -> PushActionAnswer {
        let tokens = PushActionTokens(directory: (archivePath as NSString).deletingLastPathComponent)
        let socket = ControlSocketPath.resolve(environment: environment)
        return { token in
            let grant: PushActionTokens.Grant
            switch tokens.check(token) {
            case .failure(let refusal): return PushActionAnswer(status: refusal.status, text: "refused: \(refusal)")
            case .success(let checked): grant = checked
            }
            guard let agent = ControlClient.connect(path: socket) else {
                return PushActionAnswer(status: 503, text: "roost run is not running; nothing was done (the link still works)")
            }
            if case .failure(let refusal) = tokens.spend(grant) {
                return PushActionAnswer(status: refusal.status, text: "refused: \(refusal)")
            }
            do {
                switch grant.action {
                case .read:
                    guard let marker = MarkReadAction.newest(account: grant.account, conversation: grant.target, archivePath: archivePath) else {
                        return PushActionAnswer(status: 200, text: "nothing to mark read in \(grant.target)")
                    }
                    _ = try agent.perform(marker, account: grant.account)
                    return PushActionAnswer(status: 200, text: "marked \(grant.target) read (\(grant.account))")
                case .accept, .deny:
                    let done = try agent.perform(SubscriptionAnswerAction(jid: grant.target, accept: grant.action == .accept), account: grant.account)
                    return PushActionAnswer(status: 200, text: "\(done.message) (\(grant.account))")
                }
            } catch {
                return PushActionAnswer(status: 502, text: "accepted, but \(grant.action.rawValue) on \(grant.target) failed: \(error)")
            }
        }
    }

    /// `[serve] enabled = true` in `roost run`: the same web view beside the agent. Its address with the token
    /// goes to `serve.url` in the runtime folder (0600), never to the log. A web view that cannot start is
    /// logged and the agent archives on without it.
    static func startInAgent(config: RoostConfig, context: CommandContext, writer: ArchiveWriter, log: Logger) async -> (WebServer, String)? {
        guard config.serve.enabled else { return nil }
        var options = ServeOptions(archivePath: config.archivePath, log: ServeLog(log))
        options.writer = writer
        options.host = config.serve.listen
        options.port = config.serve.port
        options.allowRemote = config.serve.allowRemote
        options.hostNames = config.serve.allowHosts
        options.thumbnails = PixbufThumbnails()
        options.pushAction = Self.pushActions(archivePath: config.archivePath, environment: context.environment)
        do {
            // Search keeps to the account `roost search` keeps to (`--account`, else `default_account`).
            options.account = try context.readingAccount(config: config, reader: nil)
        } catch {
            log.warning("serve: search covers every account: \(error)")
        }
        let runtime = RuntimeFolder.path(environment: context.environment)
        do {
            let server = try await WebServer.start(options)
            let file: String
            do {
                file = try ServeRuntimeFiles.writeURL(server.url, folder: runtime)
            } catch {
                await server.stop()
                throw error
            }
            if !ServeOptions.isLoopback(options.host) {
                log.warning("serve: listening on \(options.host): anyone who can reach it and has the token can read the archive; HTTP is not encrypted")
            }
            log.info("serve: web view at \(server.baseURL) (the address with its access token is in \(file); `roost serve --open` opens it)")
            return (server, file)
        } catch {
            log.error("serve: the web view did not start: \(error)")
            return nil
        }
    }
}

struct ServeFailure: CommandFailure {
    let message: String
    let exitCode: ExitCode
    var description: String { message }
}

extension ServeLog {
    /// The web view's lines in the agent's log format.
    init(_ log: Logger) {
        self.init(info: { log.info("serve: \($0)") }, warning: { log.warning("serve: \($0)") }, debug: { log.debug("serve: \($0)") })
    }
}
