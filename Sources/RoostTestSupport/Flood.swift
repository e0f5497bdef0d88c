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
            coalesce(sum(body = '\(flood.prefix) message ' || substr(message_id, \(flood.prefix.count + 2)) || ' 消息' || (CAST(substr(message_id, \(flood.prefix.count + 2)) AS INTEGER) % 97)), 0) \
            FROM messages WHERE message_id LIKE '\(flood.prefix)-%';
            """
        let text = try sqlite(archive, sql).trimmingCharacters(in: .whitespacesAndNewlines)
        let numbers = text.split(separator: "|", omittingEmptySubsequences: false).compactMap { Int($0) }
        guard numbers.count == 3 else { throw SQLiteQueryFailed(path: archive, message: "unexpected answer \"\(text)\"") }
        return Tally(rows: numbers[0], distinctIDs: numbers[1], matchingBodies: numbers[2])
    }

    /// Runs `sql` with the sqlite3 shell on a read-only connection (waiting up to 5 s for a lock) and
    /// returns its output; a failed query throws with sqlite3's message rather than reading as no rows.
    public static func sqlite(_ path: String, _ sql: String) throws -> String {
        let result = try RoostBinary.runProgram("/usr/bin/sqlite3", ["-readonly", "-cmd", ".timeout 5000", path, sql], timeout: 120)
        guard result.status == 0 else {
            throw SQLiteQueryFailed(path: path, message: "exit \(result.status): \(result.stderr.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        return result.stdout
    }
}

public struct SQLiteQueryFailed: Error, CustomStringConvertible {
    public let path: String
    public let message: String
    public var description: String { "sqlite3 on \(path) failed: \(message)" }
}
