import Foundation
import RoostAgent
import RoostArchive
import RoostCore
import Synchronization

/// Opening the archive for reading, and turning archive errors into exit statuses.
enum ArchiveAccess {
    static func reader(_ context: CommandContext) throws -> ArchiveReader {
        let config = try context.loadConfig()
        guard FileManager.default.fileExists(atPath: config.archivePath) else {
            throw ArchiveMissing(path: config.archivePath)
        }
        do { return try ArchiveReader(path: config.archivePath) } catch { throw ArchiveFailure(error: error) }
    }
}

struct ArchiveMissing: CommandFailure {
    let path: String
    var exitCode: ExitCode { .nothingFound }
    var description: String { "no archive at \(path) yet — run `roost run` first (or set [archive] path)" }
}

struct ArchiveFailure: CommandFailure {
    let error: ArchiveError
    var exitCode: ExitCode {
        if case .query = error { return .usage }
        return .internalError
    }
    var description: String {
        if case .query(let q) = error { return "invalid query: \(q.description)\n\(q.caretDiagram)" }
        return error.description
    }
}

/// Times as people and scripts read them, through the program's one date codec (`Timestamp`, `CivilTime`):
/// no formatter per row, the proleptic Gregorian calendar, every `Int64` printable.
enum TimeText {
    /// The local zone's offsets, cached between its transitions; one per process.
    private static let zone = Mutex(ZoneClock.local())

    /// RFC 3339 in UTC with milliseconds, for JSON.
    static func utc(_ ms: Int64) -> String {
        Timestamp.rfc3339(ms)
    }

    /// Local time to the minute (or the second), for people.
    static func local(_ ms: Int64, seconds: Bool = false) -> String {
        zone.withLock { $0.minuteText(ms, seconds: seconds) }
    }
}

extension MessageRow {
    /// The JSON object of `roost search --json` and `roost log --json` (documented in README).
    var json: JSONObject {
        [
            "id": .int(id),
            "account": .string(account),
            "conversation": .string(conversation),
            "direction": .string(direction.rawValue),
            "type": .string(kind.rawValue),
            "from": .string(from),
            "to": .string(to),
            "sender_name": .string(senderName),
            "timestamp": .string(TimeText.utc(timestamp)),
            "received_at": .string(TimeText.utc(receivedAt)),
            "claimed_at": claimedAt.map { .string(TimeText.utc($0)) } ?? .null,
            "body": .string(body),
            "subject": .string(subject),
            "thread": .string(thread),
            "stanza_id": .string(stanzaId),
            "origin_id": .string(originId),
            "message_id": .string(messageId),
            "edited": .bool(edited),
            "revisions": .int(revisions),
            "carbon": .bool(isCarbon),
            "source": .string(source.rawValue),
            "encryption": .string(encryption?.scheme),
            "sender_trust": .string(encryption?.trust),
            "undecryptable": .string(encryption?.failure),
            "attachments": .array(attachments.map { .object($0.summaryJSON) }),
            "occupant_id": .string(occupantId),
            "real_jid": .string(realJid),
        ]
    }

    /// True when the body is nothing but the link to an attachment (shown as `[file NAME SIZE]` instead).
    var bodyIsLink: Bool {
        let text = body?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        return text.isEmpty || attachments.contains { $0.url == text }
    }

    /// One human line: time, conversation, arrow, sender, body (highlighted on a terminal). A time the sender
    /// claimed that is more than a minute off is shown after the body, as a claim.
    func humanLine(highlight: Bool, showConversation: Bool = true) -> TerminalText {
        let arrow = direction == .incoming ? "<" : ">"
        let who = direction == .incoming ? (senderName ?? from) : "me"
        var text = TerminalText(displayBody ?? subject.map { "(subject) \($0)" } ?? "")
        if highlight, let body {
            text = ""
            var cursor = body.startIndex
            for range in bodyHighlightRanges {
                text += TerminalText(String(body[cursor..<range.lowerBound])) + .styled(String(body[range]), "1;33")
                cursor = range.upperBound
            }
            text += TerminalText(String(body[cursor...]))
        }
        if let encryption, encryption.isDecrypted, !encryption.isTrusted { text += " [untrusted device]" }
        if !attachments.isEmpty {
            let tags = TerminalText(attachments.map(\.tag).joined(separator: " "))
            text = bodyIsLink ? tags : text + (text.rendered.isEmpty ? "" : " ") + tags
        }
        // Foundation's replacingOccurrences cost 20 % of `roost log`'s CPU even on the many lines without a newline.
        if text.rendered.utf8.contains(0x0A) {
            text = TerminalText(stringLiteral: text.rendered.replacingOccurrences(of: "\n", with: "\n    "))
        }
        var notes = edited ? " (edited)" : ""
        if let claimedAt {
            let (difference, overflow) = claimedAt.subtractingReportingOverflow(timestamp)
            if overflow || difference <= -60_000 || difference >= 60_000 { notes += " (sender's clock says \(TimeText.local(claimedAt)))" }
        }
        if showConversation {
            // The conversation already names a 1:1 peer; print the sender only where it adds something.
            let sender: TerminalText = (direction == .incoming && who != conversation) ? " \(who):" : ""
            return "\(TimeText.local(timestamp)) \(conversation) \(arrow)\(sender) \(text)\(notes)"
        }
        return "\(TimeText.local(timestamp)) \(arrow) \(who): \(text)\(notes)"
    }
}

extension AttachmentRecord {
    /// `[file bob.png 1.2 MB]`, with the state when the file is not kept.
    var tag: String {
        var text = "[file \(displayName)"
        if let size { text += " \(FileSize.text(size))" }
        if state != .stored { text += ", \(state.rawValue)" }
        return text + "]"
    }

    /// The attachment fields of `roost search --json`, `roost log --json` and `roost files --json`.
    var summaryJSON: JSONObject {
        [
            "url": .string(url),
            "name": .string(displayName),
            "type": .string(mime),
            "size": size.map { .int($0) } ?? .null,
            "state": .string(state.rawValue),
            "sha256": .string(sha256),
            "path": .string(localPath),
        ]
    }
}
