import Foundation
import RoostAgent

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

    /// The account a server action acts on: `--account`, else the only enabled account.
    init(context: CommandContext, command: String) throws {
        self.context = context
        config = try context.loadConfig()
        let accounts = try context.selectedAccounts(in: config)
        guard accounts.count == 1 else {
            throw UsageError("several accounts are configured (\(accounts.map(\.jid).joined(separator: ", "))); choose one with --account",
                             command: command)
        }
        account = accounts[0]
    }

    var socketPath: String { ControlSocketPath.resolve(environment: context.environment) }

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
