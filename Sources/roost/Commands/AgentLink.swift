import RoostCore
import Foundation
import RoostAgent
import RoostArchive

/// Runs an account action through the running agent (control socket), or, when none runs (or it does not
/// serve the account), by logging in once with the same config. Every command that acts on the server uses this.
struct AgentLink {
    enum Route: String {
        case agent
        case oneShot = "one-shot"
    }

    let context: CommandContext
    let config: RoostConfig
    let account: AccountConfig

    /// The account a server action acts on: `--account`, else the only enabled account — or, for a listing
    /// that only reads the archive (`reading`), the config's `default_account`.
    init(context: CommandContext, command: String, reading: Bool = false) throws {
        self.context = context
        config = try context.loadConfig()
        let accounts = try context.selectedAccounts(in: config)
        if accounts.count > 1, reading, let wanted = config.defaultAccount, let chosen = config.account(wanted) {
            account = chosen
            return
        }
        guard accounts.count == 1 else {
            throw UsageError("several accounts are configured (\(accounts.map(\.jid).joined(separator: ", "))); choose one with --account",
                             command: command)
        }
        account = accounts[0]
    }

    var socketPath: String { ControlSocketPath.resolve(environment: context.environment) }

    /// The JID a contact argument means: a JID as it is, else a roster name, nickname, full name, a room's name
    /// or the start of a JID this account's archive knows (`roost send bob hi`), by the resolver every command
    /// taking WHO uses (`ArchiveView.resolve`). Ambiguous or unknown names are errors.
    func contact(_ typed: String, kinds: Set<NameDirectory.Kind> = [.contact]) throws -> String {
        let reader = FileManager.default.fileExists(atPath: config.archivePath) ? try? ArchiveReader(path: config.archivePath) : nil
        guard let reader else {
            guard typed.contains("@") else {
                throw UsageError("'\(typed)' is not a JID, and there is no archive yet to look names up in", command: "roost")
            }
            return typed
        }
        do {
            let jid = try ArchiveView.resolve(typed, reader: reader, account: account.jid, kinds: kinds).first?.jid ?? typed
            if jid.caseInsensitiveCompare(typed) != .orderedSame { context.output.info("\(typed) is \(jid)") }
            return jid
        } catch let failure as ArchiveFailure {
            // Acting on a name nobody has is a mistake in what was typed (status 2), not "nothing found".
            if case .names(.unknown) = failure.error { throw UsageError(failure.error.description, command: "roost") }
            throw failure
        }
    }

    var dataDirectory: String { (config.archivePath as NSString).deletingLastPathComponent }

    func perform<Action: AccountAction>(_ action: Action,
                                        progress: (@Sendable (TransferProgress) -> Void)? = nil) async throws -> (Action.Result, Route) {
        if let agent = ControlClient.connect(path: socketPath) {
            do {
                return (try agent.perform(action, account: account.jid, progress: progress), .agent)
            } catch where error.kind == .unknownAccount {
                // An agent running another config: this account is ours to log in.
            }
        }
        let level = context.options.effectiveLogLevel(configured: config.logLevel, commandDefault: .warning)
        return (try await OneShotLogin.perform(action, account: account, config: config, log: Logger(level: level), progress: progress),
                .oneShot)
    }

    /// The agent's status, or nil when no agent answers.
    static func agentStatus(environment: [String: String]) -> AgentStatusReport? {
        guard let agent = ControlClient.connect(path: ControlSocketPath.resolve(environment: environment)) else { return nil }
        return try? agent.status()
    }
}
