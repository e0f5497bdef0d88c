import Foundation
public import RoostXMPP
import Synchronization

/// The other party of an end-to-end test, written by someone else: contrib/scripts/xmpp-peer.py (slixmpp) in
/// session mode, driven by JSON commands on its stdin; what it receives comes back as JSON events on its
/// stdout (the protocol is described at the top of that script). A bug Roost's own client shares with Roost
/// cannot hide behind it.
public final class XMPPPeer: @unchecked Sendable {
    /// One line the peer printed: an event ("message", "presence", "roster-push", …) or a command's "reply".
    public struct Event: @unchecked Sendable, CustomStringConvertible {
        public let fields: [String: Any]
        public var kind: String { fields["event"] as? String ?? "" }
        public subscript(key: String) -> String? { fields[key].map { "\($0)" } }
        public var description: String { (try? String(decoding: JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]), as: UTF8.self)) ?? "\(fields)" }
    }

    public struct CommandFailed: Error, CustomStringConvertible {
        public let command: String
        public let reason: String
        public var description: String { "xmpp-peer \(command) failed: \(reason)" }
    }

    public let jid: JID
    public let password: String
    /// The full JID the peer is bound to.
    public private(set) var boundJID: JID

    private let process: Process
    private let input: FileHandle
    private let logPath: String
    private let state = Mutex(State())
    private let nextTag = Atomic<Int>(0)

    private struct Waiter {
        let id: Int
        let matches: @Sendable (Event) -> Bool
        let continuation: CheckedContinuation<Event, any Error>
    }

    private struct State {
        var events: [Event] = []
        var waiters: [Waiter] = []
        var nextWaiter = 0
        var ended = false
    }

    /// Logs in as `jid` (creating the account in-band first when `register`), on `server`.
    public static func start(on server: TestServer, jid: JID, password: String, register: Bool = false,
                             resource: String = "peer") async throws -> XMPPPeer {
        let peer = try XMPPPeer(server: server, jid: jid, password: password, register: register, resource: resource)
        let first = try await peer.next(timeout: .seconds(30), "login") { $0.kind == "online" || $0.kind == "error" }
        guard first.kind == "online", let bound = first["jid"].flatMap(JID.init(parsing:)) else {
            throw CommandFailed(command: "login as \(jid)", reason: "\(first["message"] ?? "?")\n\(peer.log)")
        }
        peer.boundJID = bound
        return peer
    }

    /// A new account on the test server (in-band registration by the peer itself), logged in and online.
    public static func registered(on server: TestServer, _ prefix: String = "peer", resource: String = "peer",
                                  domain: String? = nil) async throws -> XMPPPeer {
        try await start(on: server, jid: server.uniqueJID(prefix, domain: domain), password: "pw-\(UUID().uuidString.prefix(10))",
                        register: true, resource: resource)
    }

    private init(server: TestServer, jid: JID, password: String, register: Bool, resource: String) throws {
        self.jid = jid.bare
        self.password = password
        boundJID = jid
        let env = ProcessInfo.processInfo.environment
        let python = env["ROOST_TEST_PYTHON"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/bin/python3"
        process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [TestServer.packageRoot + "/contrib/scripts/xmpp-peer.py",
                             "--jid", "\(jid.bare)/\(resource)", "--host", server.host, "--port", String(server.port),
                             "--ca", server.caFile, "--timeout", "20"] + (register ? ["--register"] : []) + ["session"]
        var childEnv = env
        childEnv["XMPP_PEER_PASSWORD"] = password
        process.environment = childEnv
        let stdin = Pipe(), stdout = Pipe()
        logPath = NSTemporaryDirectory() + "roost-peer-\(UUID().uuidString.prefix(8)).log"
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        input = stdin.fileHandleForWriting
        try process.run()
        let output = stdout.fileHandleForReading
        Thread.detachNewThread { [self] in readEvents(from: output) }
    }

    deinit {
        if process.isRunning { process.terminate() }
        try? FileManager.default.removeItem(atPath: logPath)
    }

    /// What the peer wrote on stderr (slixmpp's complaints, the reason for a failed login).
    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Every event so far, in order.
    public var events: [Event] { state.withLock { $0.events } }

    // MARK: Commands

    /// Runs one session command and returns its reply once the server has acknowledged what it sent;
    /// a failed command throws with the peer's reason.
    @discardableResult
    public func call(_ command: String, _ fields: [String: Any] = [:], timeout: Duration = .seconds(30)) async throws -> Event {
        let tag = "c\(nextTag.add(1, ordering: .relaxed).newValue)"
        var object = fields
        object["cmd"] = command
        object["tag"] = tag
        let line = try JSONSerialization.data(withJSONObject: object) + Data("\n".utf8)
        try input.write(contentsOf: line)
        let reply = try await next(timeout: timeout, "the reply to \(command)") { $0.kind == "reply" && $0["tag"] == tag }
        guard reply.fields["ok"] as? Bool == true else { throw CommandFailed(command: command, reason: reply["error"] ?? "?") }
        return reply
    }

    public func send(to: JID, body: String?, type: String = "chat", id: String? = nil, thread: String? = nil,
                     chatState: String? = nil) async throws {
        var fields: [String: Any] = ["to": to.description, "type": type]
        if let body { fields["body"] = body }
        if let id { fields["id"] = id }
        if let thread { fields["thread"] = thread }
        if let chatState { fields["chatstate"] = chatState }
        try await call("send", fields)
    }

    /// Presence: with `type` (subscribe, subscribed, unsubscribe, unsubscribed, unavailable) to `to`, or an
    /// availability broadcast (`show`, `status`, `priority`).
    public func presence(to: JID? = nil, type: String? = nil, show: String? = nil, status: String? = nil, priority: Int = 0,
                         photoHash: String? = nil) async throws {
        var fields: [String: Any] = ["priority": priority]
        if let to { fields["to"] = to.description }
        if let type { fields["type"] = type }
        if let show { fields["show"] = show }
        if let status { fields["status"] = status }
        if let photoHash { fields["photo_hash"] = photoHash }
        try await call("presence", fields)
    }

    /// Logs out cleanly ("quit") and waits for the process to end.
    public func stop() async {
        _ = try? await call("quit", timeout: .seconds(10))
        try? input.close()
        try? await waitUntil("the peer to end", timeout: .seconds(10), every: .milliseconds(50)) { !process.isRunning }
        if process.isRunning { process.terminate() }
    }

    // MARK: Waiting for what arrives

    /// The first event (already seen or still to come) matching `predicate`, or an error after `timeout`.
    public func next(timeout: Duration = .seconds(20), _ what: String = "an event",
                     _ predicate: @escaping @Sendable (Event) -> Bool) async throws -> Event {
        let id = state.withLock { s -> Int in
            s.nextWaiter += 1
            return s.nextWaiter
        }
        let timer = Task { [weak self] in
            try await Task.sleep(for: timeout)
            self?.expire(id, what: what)
        }
        defer { timer.cancel() }
        return try await withCheckedThrowingContinuation { continuation in
            let ready = state.withLock { s -> Result<Event, any Error>? in
                if let match = s.events.first(where: predicate) { return .success(match) }
                if s.ended { return .failure(CommandFailed(command: what, reason: "the peer exited")) }
                s.waiters.append(Waiter(id: id, matches: predicate, continuation: continuation))
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }

    /// A message matching `predicate` (events of kind "message": body, from, chatstate, carbon, error, …).
    public func message(timeout: Duration = .seconds(20), _ predicate: @escaping @Sendable (Event) -> Bool) async throws -> Event {
        try await next(timeout: timeout, "a message") { $0.kind == "message" && predicate($0) }
    }

    /// A presence of `kind` (subscribe, subscribed, available, …) from `from` (bare JID compared).
    public func presence(_ kind: String, from: JID, timeout: Duration = .seconds(20),
                         _ predicate: @escaping @Sendable (Event) -> Bool = { _ in true }) async throws -> Event {
        let bare = from.bare.description
        return try await next(timeout: timeout, "\(kind) presence from \(bare)") {
            $0.kind == "presence" && $0["kind"] == kind && ($0["from"].flatMap(JID.init(parsing:))?.bare.description == bare) && predicate($0)
        }
    }

    private func expire(_ id: Int, what: String) {
        let waiter = state.withLock { s -> Waiter? in
            guard let index = s.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return s.waiters.remove(at: index)
        }
        let seen = events.suffix(8).map(\.description).joined(separator: "\n  ")
        waiter?.continuation.resume(throwing: WaitTimedOut(what: "\(what) from the peer \(jid); its last events:\n  \(seen)\nits log:\n\(log.suffix(2000))"))
    }

    private func readEvents(from output: FileHandle) {
        var buffer = Data()
        while true {
            let chunk = output.availableData
            if chunk.isEmpty { break }
            buffer.append(chunk)
            while let newline = buffer.firstIndex(of: 0x0A) {
                let line = buffer[buffer.startIndex..<newline]
                buffer = Data(buffer[buffer.index(after: newline)...])
                guard let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any] else { continue }
                deliver(Event(fields: object))
            }
        }
        let waiters = state.withLock { s -> [Waiter] in
            s.ended = true
            defer { s.waiters.removeAll() }
            return s.waiters
        }
        for waiter in waiters { waiter.continuation.resume(throwing: CommandFailed(command: "waiting", reason: "the peer exited:\n\(log.suffix(2000))")) }
    }

    private func deliver(_ event: Event) {
        let ready = state.withLock { s -> [Waiter] in
            s.events.append(event)
            let matched = s.waiters.filter { $0.matches(event) }
            s.waiters.removeAll { w in matched.contains { $0.id == w.id } }
            return matched
        }
        for waiter in ready { waiter.continuation.resume(returning: event) }
    }
}
