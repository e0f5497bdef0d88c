import Foundation
import RoostAgent
import RoostArchive
import RoostCore

/// `roost status`: what the running agent is doing, per account, and the archive.
struct StatusCommand: Command {
    static let name = "status"
    static let summary = "show the running agent's accounts (connection, server, resource, stream management) and the archive"
    static let usage = "[options]"
    static let discussion = """
        Asks the running agent (over its control socket, $XDG_RUNTIME_DIR/roost/control.sock) for each account's \
        connection state, server, bound resource, whether stream management is on, the last read of the server \
        archive; sent stanzas the server has not acknowledged (stream management, XEP-0198) only when they have \
        waited more than twice keepalive_seconds (Roost asks for an acknowledgement after half of it, so the server \
        does not answer; --json always has unacknowledged_outbound, unacknowledged_oldest_seconds and \
        acknowledgement_overdue); a one-line note when the server counts the account as offline (priority); \
        then shows the archive's size and counts, whether its filesystem is encrypted (fscrypt, LUKS, gocryptfs, \
        eCryptfs, as far as Linux tells; Roost does not encrypt the archive itself), and the unread \
        messages per conversation (incoming messages after the last one the user displayed on any client, wrote \
        after, or marked read with `roost read`). --account shows one account. When no agent runs it says so and \
        shows the archive only.
        When the archive cannot be written (locked by another program, disk full), it says since when and why: \
        the agent then acknowledges nothing to the servers, which keep every message until it can. \
        An account that cannot log in says why and when it tries again: `reconnecting` (a passing problem: the \
        network, the server, too many open files), `waiting` (it worked in this run, and now its password or \
        certificate is refused, its password_command hangs, or another client with the same resource replaced it \
        again and again: the agent keeps running, tries again with a backoff up to an hour, or only on SIGHUP after \
        such replacements) or `failed` (it has not logged in since the agent started: check its settings). \
        Exit status: 0 when the agent runs and no account waits for you; 3 when an account has failed or waits for \
        you, or no agent is running; 1 while archive writes fail. \
        --json also gives the agent's sighups_handled (SIGHUPs it has finished handling) and web_view (the web \
        view's address without its token, with [serve]), and per account logins (connections in this run), \
        sessions_resumed (of them, resumed sessions) and omemo_device (Roost's OMEMO device id once published).
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
            let served = accounts.contains { $0.account.caseInsensitiveCompare(only) == .orderedSame }
            if !served { _ = try context.selectedAccounts(in: config) }
            accounts = accounts.filter { $0.account.caseInsensitiveCompare(only) == .orderedSame }
        }
        if let report {
            if json {
                output.jsonLine(["kind": "agent", "running": true, "pid": .int(Int64(report.pid)), "socket": .string(socket),
                                 "archive": .string(report.archive), "committed_batches": .int(report.committedBatches),
                                 "committed_events": .int(report.committedEvents),
                                 "archive_writes": .string(report.archiveFailingSince == nil ? "ok" : "failing"),
                                 "archive_failing_since": report.archiveFailingSince.map { .string(TimeText.utc($0)) } ?? .null,
                                 "archive_failure": report.archiveFailure.map { .string($0) } ?? .null,
                                 "archive_backlog": .int(report.archiveBacklog ?? 0),
                                 "sighups_handled": report.sighupsHandled.map { .int($0) } ?? .null,
                                 "web_view": report.webView.map { .string($0) } ?? .null])
                if let mirror = report.mirror {
                    output.jsonLine(["kind": "mirror", "maildir": .string(mirror.maildir),
                                     "position": mirror.position.map { JSONValue.int($0) } ?? .null, "latest": .int(mirror.latest),
                                     "backlog": .int(mirror.backlog), "written": .int(mirror.written), "removed": .int(mirror.removed),
                                     "state": .string(mirror.stalled == nil ? "ok" : "stalled"),
                                     "stalled": mirror.stalled.map { .string($0) } ?? .null,
                                     "writing_since": mirror.writingSince.map { .string(TimeText.utc($0)) } ?? .null])
                }
            } else {
                output.line("agent: running (pid \(report.pid)), control socket \(socket)")
                if let since = report.archiveFailingSince {
                    output.line("  archive writes failing since \(TimeText.local(since, seconds: true)) (\(report.archiveFailure ?? "unknown cause")); "
                        + "nothing is acknowledged to the servers meanwhile, so nothing is lost; \(report.archiveBacklog ?? 0) events wait")
                }
                if let mirror = report.mirror {
                    // A batch (up to 500 mails) takes milliseconds: one under way for ten seconds waits on its disk.
                    let slow = mirror.writingSince.flatMap { Timestamp.now() - $0 >= 10_000 ? $0 : nil }
                    output.line("  mirror: \(mirror.maildir), \(mirror.backlog) changed message(s) to write"
                        + (mirror.stalled.map { "; stalled: \($0)" } ?? "")
                        + (slow.map { "; writing since \(TimeText.local($0, seconds: true)), waiting on its disk" } ?? ""))
                }
            }
            for account in accounts {
                if json {
                    output.jsonLine(["kind": "account", "account": .string(account.account), "state": .string(account.state),
                                     "detail": .string(account.detail),
                                     "cause": account.cause.map { .string($0) } ?? .null,
                                     "next_try": account.nextTry.map { .string(TimeText.utc($0)) } ?? .null,
                                     "server": .string(account.server),
                                     "resource": .string(account.resource), "stream_management": .bool(account.streamManagement),
                                     "last_catch_up": account.lastCatchUp.map { .string(TimeText.utc($0)) } ?? .null,
                                     "unacknowledged_outbound": .int(account.unacknowledgedOutbound),
                                     "unacknowledged_oldest_seconds": account.unacknowledgedOldestSeconds.map { .int($0) } ?? .null,
                                     "acknowledgement_overdue": .bool(account.acknowledgementOverdue(keepaliveSeconds: config.keepaliveSeconds)),
                                     "rejected_stanzas": .int(account.rejectedStanzas),
                                     "priority": account.priority.map { .int($0) } ?? .null,
                                     "other_clients_online": account.otherClientsOnline.map { .int($0) } ?? .null,
                                     "server_stores_offline": .bool(account.serverStoresOffline),
                                     "rooms_joined": .int(account.roomsJoined ?? 0),
                                     "roster_contacts": account.rosterContacts.map { .int($0) } ?? .null,
                                     "logins": account.logins.map { .int($0) } ?? .null,
                                     "sessions_resumed": account.sessionsResumed.map { .int($0) } ?? .null,
                                     "omemo_device": account.omemoDevice.map { .int(Int64($0)) } ?? .null])
                } else {
                    output.line("\(account.account): \(account.detail)")
                    output.line("  server \(account.server ?? "-"), resource \(account.resource ?? "-"), stream management \(account.streamManagement ? "on" : "off")")
                    output.line("  last server-archive read \(account.lastCatchUp.map { TimeText.local($0, seconds: true) } ?? "never"), "
                        + "\(Counted.noun(account.rejectedStanzas, "stanza")) refused, in \(Counted.noun(account.roomsJoined ?? 0, "room"))")
                    // A few sent stanzas always wait for their acknowledgement for a moment: only ones that waited
                    // far longer than a healthy link takes say something.
                    if account.acknowledgementOverdue(keepaliveSeconds: config.keepaliveSeconds) {
                        output.line("  warning: \(Counted.noun(account.unacknowledgedOutbound, "sent stanza")) not acknowledged by the server, "
                            + "the oldest for \(account.unacknowledgedOldestSeconds ?? 0) s (sent again if the connection drops)")
                    }
                    if account.serverStoresOffline, let priority = account.priority {
                        output.line("  note: priority \(priority), no other client online: the server counts it as offline "
                            + "(set `priority = 0`; `man roost`, PRIORITY)")
                    }
                }
            }
        } else if let unsafe = ControlClient.unsafeFolder(path: socket) {
            // Not asked at all: the folder may hold another user's socket.
            if json {
                output.jsonLine(["kind": "agent", "running": false, "socket": .string(socket), "refused": .string(unsafe.description)])
            } else {
                output.line("agent: not asked: \(unsafe)")
            }
        } else if json {
            output.jsonLine(["kind": "agent", "running": false, "socket": .string(socket)])
        } else {
            output.line("agent: not running (nothing answers on \(socket)); start it with `roost run` or `systemctl --user start roost`")
        }
        showArchive(config.archivePath, account: context.options.account, context: context)
        if report == nil { return .connection }
        if accounts.contains(where: \.needsUser) { return .connection }
        return report?.archiveFailingSince == nil ? .ok : .nothingFound
    }

    /// Roost does not encrypt the archive itself: it says whether the filesystem under it does.
    static func encryptionLine(_ encryption: VolumeEncryption) -> String {
        switch encryption {
        case .encrypted(let how): "archive on an encrypted filesystem (\(how))"
        case .notEncrypted: "archive on an unencrypted filesystem: see README \"Encryption at rest\""
        case .unknown: "archive's filesystem: cannot tell whether it is encrypted (see README \"Encryption at rest\")"
        }
    }

    private func showArchive(_ path: String, account: String?, context: CommandContext) {
        let output = context.output
        let encryption = VolumeEncryption.of(path: path)
        let (encrypted, how): (JSONValue, JSONValue) = switch encryption {
        case .encrypted(let how): (.bool(true), .string(how))
        case .notEncrypted: (.bool(false), .null)
        case .unknown: (.null, .null)
        }
        guard FileManager.default.fileExists(atPath: path), let reader = try? ArchiveReader(path: path),
              let stats = try? reader.stats(account: account?.lowercased()) else {
            if context.options.json {
                output.jsonLine(["kind": "archive", "path": .string(path), "exists": false,
                                 "filesystem_encrypted": encrypted, "encryption": how])
            } else {
                output.line("archive: \(path) (not created yet)")
                output.line("  " + Self.encryptionLine(encryption))
            }
            return
        }
        let unread = (try? reader.unreadConversations(account: context.options.account?.lowercased())) ?? []
        let unreadTotal = unread.reduce(0) { $0 + $1.unread }
        if context.options.json {
            output.jsonLine(["kind": "archive", "path": .string(path), "exists": true, "size_bytes": .int(stats.archiveSizeBytes),
                             "messages": .int(stats.totalMessages), "conversations": .int(stats.conversations.count),
                             "presence_events": .int(stats.presenceEvents), "subscription_events": .int(stats.subscriptionEvents),
                             "unread": .int(unreadTotal),
                             "filesystem_encrypted": encrypted, "encryption": how])
            for conversation in unread {
                output.jsonLine(["kind": "unread", "account": .string(conversation.account), "conversation": .string(conversation.conversation),
                                 "unread": .int(conversation.unread)])
            }
        } else {
            output.line("archive: \(path), \(ByteCountFormatter.string(fromByteCount: stats.archiveSizeBytes, countStyle: .file)), "
                + "\(Counted.noun(stats.totalMessages, "message")) in \(Counted.noun(stats.conversations.count, "conversation"))")
            output.line("  " + Self.encryptionLine(encryption))
            if !unread.isEmpty {
                output.line("unread: \(unreadTotal) (" + unread.map { "\($0.unread) from \($0.conversation)" }.joined(separator: ", ") + ")")
            }
        }
    }
}
