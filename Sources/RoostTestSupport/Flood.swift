public import Foundation
public import RoostXMPP

/// A peer that sends numbered messages and makes sure the server accepted every one (XEP-0198 acks),
/// so a test can demand that each of them ends up in the archive exactly once.
public struct Flood: Sendable {
    public let prefix: String
    public let count: Int

    public init(count: Int, prefix: String = "flood-\(UUID().uuidString.prefix(6))") {
        self.count = count
        self.prefix = prefix
    }

    public func id(_ i: Int) -> String { "\(prefix)-\(i)" }
    public func body(_ i: Int) -> String { "\(prefix) message \(i) 消息\(i % 97)" }

    /// Sends all messages at about `perSecond`, calling `tick(i)` after each (for fault injection), then
    /// waits until the server has acknowledged all of them.
    public func send(from client: XMPPClient, to: JID, perSecond: Int = 2000,
                     tick: @Sendable (Int) async -> Void = { _ in }) async throws {
        let started = ContinuousClock.now
        for i in 1...count {
            let message = Message(to: to, type: .chat, body: body(i), id: id(i))
            try client.send(message)
            if i % 50 == 0 {
                client.requestAcknowledgement()
                let due = started + .milliseconds(i * 1000 / perSecond)
                if ContinuousClock.now < due { try await Task.sleep(until: due) }
            }
            await tick(i)
        }
        client.requestAcknowledgement()
        let deadline = ContinuousClock.now + .seconds(60)
        while client.unacknowledgedCount > 0 {
            guard ContinuousClock.now < deadline else { throw WaitTimedOut(what: "the server to acknowledge the flood (\(client.unacknowledgedCount) left)") }
            client.requestAcknowledgement()
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}

/// Counts what an archive holds of a flood, straight from SQLite (what a user's `roost search` would see).
public enum ArchiveCount {
    public struct Tally: Sendable, CustomStringConvertible {
        public var rows: Int
        public var distinctIDs: Int
        public var matchingBodies: Int
        public var description: String { "\(rows) rows, \(distinctIDs) distinct ids, \(matchingBodies) with the right body" }

        public init(rows: Int, distinctIDs: Int, matchingBodies: Int) {
            self.rows = rows
            self.distinctIDs = distinctIDs
            self.matchingBodies = matchingBodies
        }
    }

    public static func tally(archive: String, flood: Flood) throws -> Tally {
        let sql = """
            SELECT count(*), count(DISTINCT message_id), \
            sum(body = '\(flood.prefix) message ' || substr(message_id, \(flood.prefix.count + 2)) || ' 消息' || (CAST(substr(message_id, \(flood.prefix.count + 2)) AS INTEGER) % 97)) \
            FROM messages WHERE message_id LIKE '\(flood.prefix)-%';
            """
        let out = try sqlite(archive, sql).trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "|").map { Int($0) ?? 0 }
        guard out.count == 3 else { return Tally(rows: 0, distinctIDs: 0, matchingBodies: 0) }
        return Tally(rows: out[0], distinctIDs: out[1], matchingBodies: out[2])
    }

    public static func sqlite(_ path: String, _ sql: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = ["-readonly", path, sql]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}
