public import Foundation
public import RoostArchive

/// Builds large synthetic archives for benchmarks (`roost-bench`): mixed-language messages across two
/// accounts, a few hundred contacts and some rooms, one message every ~30 s on average, ending near now.
public enum SyntheticArchive {
    public struct Report: Sendable {
        public var messages: Int
        public var seconds: Double
        public var messagesPerSecond: Double { seconds > 0 ? Double(messages) / seconds : 0 }
    }

    public static let accounts = ["alice@example.org", "bob@example.net"]

    /// Contact `n` of the synthetic archive (`contact0@example.com` … `contact299@example.com`).
    public static func contact(_ index: Int) -> String { "contact\(index)@example.com" }

    /// Writes `messages` messages (batches of 5 000 through `ArchiveWriter`, `synchronous=OFF`), then merges
    /// the full-text index. Deterministic for a given seed. `cjkShare` is the fraction of CJK messages.
    @discardableResult
    public static func build(at path: String, messages: Int, cjkShare: Double = 0.15, seed: UInt64 = 1,
                             endingAt end: Date = Date()) throws(ArchiveError) -> Report {
        let started = Date()
        let writer = try ArchiveWriter(path: path, durability: .off)
        var random = SplitMix64(seed: seed)
        let averageGapMs: Int64 = 30_000
        var timestamp = Int64(end.timeIntervalSince1970 * 1000) - Int64(messages) * averageGapMs
        var batch: [ArchiveEvent] = []
        batch.reserveCapacity(5_000)
        let cjkThreshold = Int(cjkShare * 1_000_000)
        for index in 0..<messages {
            timestamp += Int64(random.below(Int(2 * averageGapMs)))
            let account = accounts[random.below(accounts.count)]
            let isRoom = random.below(100) < 5
            let peerIndex = random.zipfIndex(300)
            let conversation = isRoom ? "room\(peerIndex % 10)@conference.example.com" : contact(peerIndex)
            let outgoing = !isRoom && random.below(2) == 0
            let body = random.below(1_000_000) < cjkThreshold ? SyntheticText.cjkSentence(&random) : SyntheticText.latinSentence(&random)
            let nick = "nick\(random.below(20))"
            let from = outgoing ? account + "/roost" : isRoom ? conversation + "/" + nick : conversation + "/phone"
            let record = MessageRecord(
                account: account, conversation: conversation, direction: outgoing ? .outgoing : .incoming,
                kind: isRoom ? .groupchat : .chat, from: from, to: outgoing ? conversation : account,
                senderName: isRoom ? nick : (outgoing ? nil : "Contact \(peerIndex)"), body: body,
                timestamp: timestamp, stanzaId: "sid-\(seed)-\(index)", stanzaIdBy: account, stanzaIdTrusted: true,
                originId: "oid-\(seed)-\(index)", messageId: "mid-\(index)", source: .mam)
            batch.append(.message(record))
            if batch.count == 5_000 {
                _ = try writer.commitBlocking(batch)
                batch.removeAll(keepingCapacity: true)
            }
        }
        if !batch.isEmpty { _ = try writer.commitBlocking(batch) }
        try writer.optimizeSearchIndex()
        try writer.checkpoint()
        return Report(messages: messages, seconds: Date().timeIntervalSince(started))
    }
}
