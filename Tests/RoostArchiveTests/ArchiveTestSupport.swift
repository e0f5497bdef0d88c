import Foundation
import RoostArchive

/// A fresh folder under the system temp directory, removed when the value is dropped.
final class TemporaryArchive {
    let folder: String
    let path: String

    init() {
        folder = NSTemporaryDirectory() + "roost-archive-tests-" + UUID().uuidString
        path = folder + "/data/archive.sqlite"
    }

    deinit {
        try? FileManager.default.removeItem(atPath: folder)
    }

    func writer() throws -> ArchiveWriter { try ArchiveWriter(path: path, durability: .normal) }
    func reader() throws -> ArchiveReader { try ArchiveReader(path: path) }
}

enum Fixture {
    static let account = "me@example.org"
    static let peer = "peer@example.com"
    /// 2026-01-15T12:00:00Z
    static let baseTime: Int64 = 1_768_478_400_000

    static func message(_ body: String?, at offset: Int64 = 0, direction: MessageDirection = .incoming,
                        conversation: String = peer, from: String? = nil, kind: MessageKind = .chat,
                        stanzaId: String? = nil, trusted: Bool = true, originId: String? = nil, messageId: String? = nil,
                        replaces: String? = nil, senderName: String? = nil, subject: String? = nil,
                        source: MessageSource = .live, attachments: [AttachmentRecord] = []) -> MessageRecord {
        let sender = from ?? (direction == .incoming ? conversation + "/phone" : account + "/roost")
        return MessageRecord(
            account: account, conversation: conversation, direction: direction, kind: kind, from: sender,
            to: direction == .incoming ? account : conversation, senderName: senderName, body: body, subject: subject,
            timestamp: baseTime + offset, stanzaId: stanzaId, stanzaIdBy: stanzaId == nil ? nil : account,
            stanzaIdTrusted: trusted && stanzaId != nil, originId: originId, messageId: messageId, replaces: replaces,
            source: source, attachments: attachments)
    }
}
