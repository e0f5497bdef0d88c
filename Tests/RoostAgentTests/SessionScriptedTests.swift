import Foundation
import Testing
import RoostArchive
import RoostCore
import RoostTestSupport
import Synchronization
@testable import RoostAgent
@testable import RoostXMPP

/// Issue 31, 2 and 6: the whole account session (`AccountSession`: routing, the archive writer, acknowledgements,
/// reconnecting) on scripted channels in memory instead of a server: the acknowledgement of a stanza never runs
/// ahead of its commit, a dropped stream is resumed with the `h` committed with the data, an `h` above what was
/// sent ends the stream and the session logs in again. In seconds, with no socket. The archive "fails on command":
/// a second connection holds its write lock, so commits fail and are retried until it lets go.
@Suite("AccountSession on a scripted channel")
struct SessionScriptedTests {
    static let account = "alice@example.org"

    final class Rig: Sendable {
        let folder: TestDirectory
        let path: String
        let writer: ArchiveWriter
        let session: AccountSession
        private let blocker: Mutex<Database>

        init(servers: [ScriptedServer]) throws {
            folder = try TestDirectory("roost-session-scripted")
            path = folder.path + "/archive.sqlite"
            var account = AccountConfig(jid: SessionScriptedTests.account, password: .literal("secret"))
            account.omemo = false
            let log = Logger(level: .error, sink: { _ in })
            writer = try ArchiveWriter(path: path, durability: .normal, log: log)
            writer.setLockTimeout(.milliseconds(5))
            blocker = Mutex(try Database(path: path, mode: .readWrite, synchronous: .normal, busyTimeoutMs: 5000))
            // The servers the session's logins meet, in order; the last one stays for any further login.
            let queue = Mutex(servers)
            session = try AccountSession(
                account: account,
                settings: AgentSettings(config: RoostConfig(archivePath: path)), writer: writer, log: log, resumption: nil,
                sync: nil, notifications: NotificationHub(), contacts: [], pendingRequests: [],
                openChannel: { _, _ throws(ClientError) in
                    queue.withLock { $0.count > 1 ? $0.removeFirst() : $0[0] }
                }, stateChanged: {})
        }

        func lock() throws { try blocker.withLock { try $0.execute("BEGIN IMMEDIATE") } }
        func unlock() throws { try blocker.withLock { try $0.execute("COMMIT") } }

        /// Rows stored with `body`, read through a connection of its own (what is on disk).
        func stored(_ body: String) throws -> Int64 {
            let reader = try Database(path: path, mode: .readOnly)
            return try reader.cached("SELECT count(*) FROM messages WHERE body = ?").scalarInt([.text(body)]) ?? 0
        }

        /// Waits until the session is online with its roster loaded (what `roost status` calls ready).
        func ready() async throws {
            try await waitUntil("the session online with its roster", timeout: .seconds(120)) {
                let status = await self.session.status()
                if case .online = status.state { return status.rosterContacts != nil }
                return false
            }
        }

        func stop() async {
            await session.stop()
            await writer.drainAndStop()
        }
    }

    static func chat(_ body: String, id: String) -> String {
        "<message from='bob@example.org/phone' to='alice@example.org/roost' type='chat' id='\(id)'><body>\(body)</body></message>"
    }

    /// The `h` of every `<a/>` the client wrote after the first `count` elements.
    static func acknowledgements(_ server: ScriptedServer, after count: Int) -> [Int] {
        server.received.dropFirst(count).filter { $0.name == "a" && $0.namespace == Namespace.streamManagement }
            .compactMap { $0[attribute: "h"].flatMap(Int.init) }
    }

    /// While the archive cannot commit, `<r/>` is answered without the message; once it can, the `<a/>` counts it and
    /// the row is on disk by then.
    @Test(.timeLimit(.minutes(5))) func theAcknowledgementOfAMessageWaitsForItsCommit() async throws {
        let server = ScriptedServer(answersQueries: true)
        let rig = try Rig(servers: [server])
        await rig.session.start()
        try await rig.ready()
        let before = server.stanzasSinceEnabled
        try rig.lock()
        server.deliver(Self.chat("scripted-ack-marker", id: "m1"))
        var seen = server.received.count
        server.deliver("<r xmlns='urn:xmpp:sm:3'/>")
        try await waitUntil("an answer to <r/> while the archive is locked", timeout: .seconds(120), every: .milliseconds(5)) {
            !Self.acknowledgements(server, after: seen).isEmpty
        }
        #expect(Self.acknowledgements(server, after: seen).allSatisfy { $0 <= before },
                "acknowledged \(Self.acknowledgements(server, after: seen)) with \(before) stanzas before the uncommitted message")
        #expect(try rig.stored("scripted-ack-marker") == 0)
        try rig.unlock()
        seen = server.received.count
        try await waitUntil("the message acknowledged once committed", timeout: .seconds(120), every: .milliseconds(5)) {
            server.deliver("<r xmlns='urn:xmpp:sm:3'/>")
            return Self.acknowledgements(server, after: seen).contains { $0 >= before + 1 }
        }
        #expect(try rig.stored("scripted-ack-marker") == 1, "the acknowledgement came before the row was on disk")
        await rig.stop()
    }

    /// A dropped stream is resumed: the `<resume/>` carries the `h` that counts the committed message, the session is
    /// online again without a new login, and the message is stored once.
    @Test(.timeLimit(.minutes(5))) func aDroppedStreamIsResumedWithTheCommittedCount() async throws {
        let first = ScriptedServer(answersQueries: true)
        let second = ScriptedServer(sm: .resumed(h: 0), answersQueries: true)
        let rig = try Rig(servers: [first, second])
        await rig.session.start()
        try await rig.ready()
        first.deliver(Self.chat("scripted-resume-marker", id: "m2"))
        let message = first.stanzasSinceEnabled
        try await waitUntil("the message committed", timeout: .seconds(120), every: .milliseconds(5)) {
            try rig.stored("scripted-resume-marker") == 1
        }
        first.drop()
        let played = first.stanzasSinceEnabled
        try await waitUntil("a <resume/> on the second connection", timeout: .seconds(120), every: .milliseconds(10)) {
            second.received.contains { $0.name == "resume" }
        }
        let resume = try #require(second.received.first { $0.name == "resume" })
        #expect(resume[attribute: "previd"] == "sm1")
        // The message is counted (it is stored); nothing beyond what was played is: the server resends the rest.
        let h = try #require(resume[attribute: "h"].flatMap(Int.init))
        #expect(h >= message && h <= played, "resumed with h \(h): the message was stanza \(message), \(played) were played")
        try await waitUntil("online again", timeout: .seconds(120)) {
            if case .online = await rig.session.status().state { return true }
            return false
        }
        #expect(try rig.stored("scripted-resume-marker") == 1)
        await rig.stop()
    }

    /// An `<a/>` acknowledging more than was sent is a protocol violation: the client ends that stream with the
    /// error XEP-0198 names, and the session logs in again (a fresh session when the server refuses to resume).
    @Test(.timeLimit(.minutes(5))) func anAcknowledgementAboveWhatWasSentEndsTheStreamAndTheSessionLogsInAgain() async throws {
        let first = ScriptedServer(answersQueries: true)
        let second = ScriptedServer(sm: .failed, answersQueries: true)
        let rig = try Rig(servers: [first, second])
        await rig.session.start()
        try await rig.ready()
        first.deliver("<a xmlns='urn:xmpp:sm:3' h='9999'/>")
        try await waitUntil("a stream error for the acknowledgement", timeout: .seconds(120), every: .milliseconds(5)) {
            first.received.contains { $0.name == "error" && $0.namespace == Namespace.stream }
        }
        let error = try #require(first.received.first { $0.name == "error" && $0.namespace == Namespace.stream })
        #expect(error.child("handled-count-too-high", namespace: Namespace.streamManagement) != nil,
                "\(XMLSerializer.serialize(error))")
        try await waitUntil("a new login on the second connection", timeout: .seconds(120), every: .milliseconds(10)) {
            second.received.contains { $0.name == "enable" }
        }
        try await rig.ready()
        await rig.stop()
    }

    /// An action goes through the account's session: nothing runs while the account is not online; online, it gets
    /// the session's own client, what it records is committed through the session (on disk when `record` returns),
    /// and its answer comes back.
    @Test(.timeLimit(.minutes(5))) func anActionRunsThroughTheSessionWithItsClientAndArchive() async throws {
        let server = ScriptedServer(answersQueries: true)
        let rig = try Rig(servers: [server])
        let request = ActionRequest(priority: 0, omemoSend: .auto, dataDirectory: rig.folder.path)
        let ran = Mutex(0)
        let offline = await rig.session.perform(request) { _ in
            ran.withLock { $0 += 1 }
            return Data("ran".utf8)
        }
        #expect(offline == nil && ran.withLock { $0 } == 0, "an action ran before the account was online")

        await rig.session.start()
        try await rig.ready()
        server.deliver(Self.chat("scripted-action-marker", id: "m1"))
        try await waitUntil("the message stored", timeout: .seconds(120), every: .milliseconds(5)) { try rig.stored("scripted-action-marker") == 1 }
        let path = rig.path
        let readRows = "SELECT count(*) FROM read_state WHERE conversation = 'bob@example.org' AND read_row > 0"
        #expect(try Database(path: path, mode: .readOnly).cached(readRows).scalarInt([]) == 0, "unread before the action")
        let answer = await rig.session.perform(request) { [session = rig.session] context in
            guard context.client === session.client else { return Data("another client".utf8) }
            do throws(ActionFailure) {
                try await context.archive.record([.conversationRead(account: SessionScriptedTests.account, conversation: "bob@example.org",
                                                                    timestamp: Timestamp.now())])
            } catch {
                return Data("not recorded: \(error)".utf8)
            }
            let rows = (try? Database(path: path, mode: .readOnly).cached(readRows).scalarInt([])) ?? nil
            return Data("recorded \(rows ?? -1)".utf8)
        }
        #expect(answer.map { String(decoding: $0, as: UTF8.self) } == "recorded 1")
        await rig.stop()
    }
}
