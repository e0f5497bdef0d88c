import Foundation
import RoostAgent
import RoostArchive

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

/// Times as people and scripts read them.
enum TimeText {
    /// RFC 3339 in UTC with milliseconds, for JSON.
    static func utc(_ ms: Int64) -> String {
        let date = Date(timeIntervalSince1970: TimeInterval(ms) / 1000)
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'"
        return f.string(from: date)
    }

    /// Local time to the minute, for people.
    static func local(_ ms: Int64, seconds: Bool = false) -> String {
        let date = Date(timeIntervalSince1970: TimeInterval(ms) / 1000)
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = .current
        f.dateFormat = seconds ? "yyyy-MM-dd HH:mm:ss" : "yyyy-MM-dd HH:mm"
        return f.string(from: date)
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

    /// One human line: time, conversation, arrow, sender, body (highlighted on a terminal).
    func humanLine(highlight: Bool, showConversation: Bool = true) -> String {
        let arrow = direction == .incoming ? "<" : ">"
        let who = direction == .incoming ? (senderName ?? from) : "me"
        var text = displayBody ?? subject.map { "(subject) \($0)" } ?? ""
        if highlight, body != nil { text = highlightedBody(open: "\u{1B}[1;33m", close: "\u{1B}[0m") }
        if let encryption, encryption.isDecrypted, !encryption.isTrusted { text += " [untrusted device]" }
        if !attachments.isEmpty {
            let tags = attachments.map(\.tag).joined(separator: " ")
            text = bodyIsLink ? tags : text + (text.isEmpty ? "" : " ") + tags
        }
        text = text.replacingOccurrences(of: "\n", with: "\n    ")
        let edited = edited ? " (edited)" : ""
        if showConversation {
            // The conversation already names a 1:1 peer; print the sender only where it adds something.
            let sender = (direction == .incoming && who != conversation) ? " \(who):" : ""
            return "\(TimeText.local(timestamp)) \(conversation) \(arrow)\(sender) \(text)\(edited)"
        }
        return "\(TimeText.local(timestamp)) \(arrow) \(who): \(text)\(edited)"
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
