import Foundation
import RoostAgent
import RoostArchive

/// `roost status`: what the running agent is doing, per account, and the archive.
struct StatusCommand: Command {
    static let name = "status"
    static let summary = "show the running agent's accounts (connection, server, resource, stream management) and the archive"
    static let usage = "[options]"
    static let discussion = """
        Asks the running agent (over its control socket, $XDG_RUNTIME_DIR/roost/control.sock) for each account's \
        connection state, server, bound resource, whether stream management is on, the last read of the server \
        archive and how many sent stanzas the server has not acknowledged yet; then shows the archive's size and \
        counts. When no agent runs it says so and shows the archive only.
        Exit status: 0 when the agent runs and no account has failed; 3 when an account has failed (wrong \
        password, certificate problem) or no agent is running.
        """
    static let options: [OptionSpec] = []

    init(parsed: ParsedArguments) throws(UsageError) {
        try parsed.requireNoPositionals()
    }

    func run(context: CommandContext) async throws -> ExitCode {
        let config = try context.loadConfig()
        let output = context.output
        let json = context.options.json
        let socket = ControlSocketPath.resolve(environment: context.environment)
        let report = AgentLink.agentStatus(environment: context.environment)
        var accounts = report?.accounts ?? []
        if let only = context.options.account {
            accounts = accounts.filter { $0.account.caseInsensitiveCompare(only) == .orderedSame }
        }
        if let report {
            if json {
                output.jsonLine(["kind": "agent", "running": true, "pid": .int(Int64(report.pid)), "socket": .string(socket),
                                 "archive": .string(report.archive), "committed_batches": .int(report.committedBatches),
                                 "committed_events": .int(report.committedEvents)])
            } else {
                output.line("agent: running (pid \(report.pid)), control socket \(socket)")
            }
            for account in accounts {
                if json {
                    output.jsonLine(["kind": "account", "account": .string(account.account), "state": .string(account.state),
                                     "detail": .string(account.detail), "server": .string(account.server),
                                     "resource": .string(account.resource), "stream_management": .bool(account.streamManagement),
                                     "last_catch_up": account.lastCatchUp.map { .string(TimeText.utc($0)) } ?? .null,
                                     "unacknowledged_outbound": .int(account.unacknowledgedOutbound),
                                     "rejected_stanzas": .int(account.rejectedStanzas)])
                } else {
                    output.line("\(account.account): \(account.detail)")
                    output.line("  server \(account.server ?? "-"), resource \(account.resource ?? "-"), stream management \(account.streamManagement ? "on" : "off")")
                    output.line("  last server-archive read \(account.lastCatchUp.map { TimeText.local($0, seconds: true) } ?? "never"), "
                        + "\(account.unacknowledgedOutbound) sent stanzas awaiting acknowledgement, \(account.rejectedStanzas) stanzas refused")
                }
            }
        } else if json {
            output.jsonLine(["kind": "agent", "running": false, "socket": .string(socket)])
        } else {
            output.line("agent: not running (nothing answers on \(socket)); start it with `roost run` or `systemctl --user start roost`")
        }
        showArchive(config.archivePath, context: context)
        if report == nil { return .connection }
        return accounts.contains(where: \.isFailed) ? .connection : .ok
    }

    private func showArchive(_ path: String, context: CommandContext) {
        let output = context.output
        guard FileManager.default.fileExists(atPath: path), let reader = try? ArchiveReader(path: path), let stats = try? reader.stats() else {
            if context.options.json {
                output.jsonLine(["kind": "archive", "path": .string(path), "exists": false])
            } else {
                output.line("archive: \(path) (not created yet)")
            }
            return
        }
        if context.options.json {
            output.jsonLine(["kind": "archive", "path": .string(path), "exists": true, "size_bytes": .int(stats.archiveSizeBytes),
                             "messages": .int(stats.totalMessages), "conversations": .int(stats.conversations.count),
                             "presence_events": .int(stats.presenceEvents), "subscription_events": .int(stats.subscriptionEvents)])
        } else {
            output.line("archive: \(path), \(ByteCountFormatter.string(fromByteCount: stats.archiveSizeBytes, countStyle: .file)), "
                + "\(stats.totalMessages) messages in \(stats.conversations.count) conversations")
        }
    }
}
