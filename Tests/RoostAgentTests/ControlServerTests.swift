import Foundation
import Testing
import RoostCore
@testable import RoostAgent
import RoostArchive
import RoostXMPP
import RoostTestSupport
import Synchronization

/// The control socket in-process, with a stand-in agent: ownership of the path, framing, and error replies.
@Suite("Control server")
struct ControlServerTests {
    final class Folder: @unchecked Sendable {
        let path = "/tmp/roost-ctl-\(UUID().uuidString.prefix(8))"
        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    struct StandIn: AgentHandle {
        let accountJIDs = ["me@example.org", "slow@example.org"]
        let archivePath: String
        let writer: ArchiveWriter
        /// Requests for slow@example.org wait here until the test opens it.
        var gate = Gate()

        func perform(for account: String, _ request: ActionRequest, _ work: @escaping @Sendable (ActionContext) async -> Data) async -> Data? {
            if account == "slow@example.org" { await gate.wait() }
            return nil
        }
        func stopAccount(_ account: String) async {}

        func status() async -> [AccountStatus] {
            [AccountStatus(account: "me@example.org", state: .failed("authentication failed: not-authorized", nextTry: Date(timeIntervalSinceNow: 3600)), server: "example.org",
                           boundResource: nil, streamManagement: false, lastCatchUp: nil, unacknowledgedOutbound: 0, rejectedStanzas: 0)]
        }
    }

    /// Opened once by the test; every waiter then goes on.
    final class Gate: Sendable {
        private let state = Mutex<(open: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))
        private let arrivals = Atomic<Int>(0)

        var arrived: Int { arrivals.load(ordering: .relaxed) }

        func wait() async {
            arrivals.add(1, ordering: .relaxed)
            await withCheckedContinuation { continuation in
                let resume = state.withLock { s -> Bool in
                    if s.open { return true }
                    s.waiting.append(continuation)
                    return false
                }
                if resume { continuation.resume() }
            }
        }

        func open() {
            for waiter in state.withLock({ s -> [CheckedContinuation<Void, Never>] in
                s.open = true
                defer { s.waiting = [] }
                return s.waiting
            }) { waiter.resume() }
        }
    }

    /// The server under test. Tests other than the idle-timeout one wait far longer for silence: on a loaded
    /// machine the test's own client can take more than the real 10 s between connecting and asking.
    private func serving(_ folder: Folder, gate: Gate = Gate(), idleTimeoutSeconds: Int = 300) throws -> (ControlServer, String) {
        try FileManager.default.createDirectory(atPath: folder.path + "/run", withIntermediateDirectories: true)
        let archive = folder.path + "/data/archive.sqlite"
        let handle = StandIn(archivePath: archive,
                             writer: try ArchiveWriter(path: archive, log: Logger(level: .error, sink: { _ in })),
                             gate: gate)
        let path = folder.path + "/run/roost/control.sock"
        let server = try ControlServer.bind(path: path, idleTimeoutSeconds: idleTimeoutSeconds)
        server.start(dispatcher: ControlDispatcher(handle: handle, config: RoostConfig(archivePath: archive)))
        return (server, path)
    }

    /// The client blocks on its socket, and the server answers on the cooperative pool: the test's blocking
    /// calls run on a thread of their own (`offPool`) so parallel tests cannot starve the pool.
    private func ask(_ client: ControlClient, _ line: String) async throws -> [String: Any] {
        let answer = try #require(try await offPool { client.exchange(Data(line.utf8), timeoutSeconds: 120) })
        return try #require(try JSONSerialization.jsonObject(with: answer) as? [String: Any])
    }

    @Test func secondServerOnTheSamePathIsRefusedAndStopRemovesTheSocket() throws {
        let folder = Folder()
        let (server, path) = try serving(folder)
        #expect(throws: ControlServerError.self) { _ = try ControlServer.bind(path: path) }
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        server.stop()
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(ControlClient.connect(path: path) == nil)
    }

    @Test func staleSocketIsReplacedButOtherFilesAreNot() throws {
        let folder = Folder()
        let directory = folder.path + "/run/roost"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        // A socket file nobody listens on, as a killed agent leaves it.
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        _ = UnixSocketAddress.with(path: directory + "/control.sock") { bind(fd, $0, $1) }
        close(fd)
        let server = try ControlServer.bind(path: directory + "/control.sock")
        server.stop()
        try "x".write(toFile: directory + "/other.sock", atomically: false, encoding: .utf8)
        #expect(throws: ControlServerError.self) { _ = try ControlServer.bind(path: directory + "/other.sock") }
    }

    @Test func malformedRequestsGetErrorRepliesAndTheConnectionStaysUsable() async throws {
        let folder = Folder()
        let (server, path) = try serving(folder)
        defer { server.stop() }
        let client = try #require(ControlClient.connect(path: path))
        for garbage in ["{", "[1,2]", "42", #"{"command": 7}"#, "\u{0}\u{1}binary"] {
            let answer = try await ask(client, garbage)
            #expect(answer["ok"] as? Bool == false, "\(garbage)")
            #expect((answer["error"] as? [String: Any])?["kind"] as? String == "bad-request")
        }
        let offline = try await ask(client, #"{"id": 9, "command": "roster.list", "account": "me@example.org"}"#)
        #expect((offline["error"] as? [String: Any])?["kind"] as? String == "connection")
        #expect(offline["id"] as? Int == 9)
        let ping = try await ask(client, #"{"command": "ping"}"#)
        #expect(ping["ok"] as? Bool == true)
    }

    @Test func statusReportsTheFailedAccount() async throws {
        let folder = Folder()
        let (server, path) = try serving(folder)
        defer { server.stop() }
        let client = try #require(ControlClient.connect(path: path))
        // The server answers on this test process's cooperative pool (two threads on two cores), which the
        // suite's other tests can hold for tens of seconds at its start: the same deadline as `ask`.
        let status = try await offPool { try client.status(timeoutSeconds: 120) }
        #expect(status.accounts.count == 1)
        #expect(status.accounts[0].isFailed)
        #expect(status.accounts[0].detail.contains("not-authorized"))
        #expect(status.pid == getpid())
    }

    @Test func clientTurnsErrorRepliesIntoTypedFailures() async throws {
        let folder = Folder()
        let (server, path) = try serving(folder)
        defer { server.stop() }
        let client = try #require(ControlClient.connect(path: path))
        let outcome = try await offPool { () -> ActionFailure? in
            do throws(ActionFailure) { _ = try client.perform(RosterFetchAction(), account: "other@example.org") } catch { return error }
            return nil
        }
        #expect(outcome == ActionFailure(.unknownAccount, "this agent does not serve other@example.org (it serves: me@example.org, slow@example.org)"))
    }

    /// A connection the test opens and leaves idle.
    private func idleConnection(_ path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        let connected = UnixSocketAddress.with(path: path) { connect(fd, $0, $1) } ?? -1
        try #require(connected == 0)
        return fd
    }

    /// Whether the server closed `fd` (reads end of file, or the connection was reset).
    private func closedByServer(_ fd: Int32) -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, 0) > 0 else { return false }
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, Int32(MSG_DONTWAIT)) <= 0
    }

    @Test func idleConnectionsDoNotLockOutStatusAndAreClosedSoon() async throws {
        let folder = Folder()
        let (server, path) = try serving(folder, idleTimeoutSeconds: ControlProtocol.idleTimeoutSeconds)
        defer { server.stop() }
        // Every ordinary slot taken by a client that connects and says nothing.
        let idle = try (0..<ControlProtocol.maxConnections).map { _ in try idleConnection(path) }
        defer { idle.forEach { close($0) } }
        // An ordinary request answered on a further connection: proof the slots are full, and that status still
        // gets through beside them.
        let busy = try #require(ControlClient.connect(path: path))
        let refused = try await ask(busy, #"{"command": "roster.list", "account": "me@example.org"}"#)
        #expect((refused["error"] as? [String: Any])?["message"] as? String == "the agent is busy with \(ControlProtocol.maxConnections) control connections; only status and ping are answered now; try again")
        let client = try #require(ControlClient.connect(path: path))
        let status = try await offPool { try client.status(timeoutSeconds: 120) }
        #expect(status.pid == getpid())
        // The idle ones are closed after the idle timeout (10 s), freeing their slots.
        try await waitUntil("the idle connections to be closed", timeout: .seconds(Double(ControlProtocol.idleTimeoutSeconds) + 20)) {
            idle.allSatisfy(closedByServer)
        }
        let afterwards = try #require(ControlClient.connect(path: path))
        let list = try await ask(afterwards, #"{"command": "roster.list", "account": "me@example.org"}"#)
        #expect((list["error"] as? [String: Any])?["kind"] as? String == "connection", "\(list)")
    }

    /// A read waits in one poll for its input or its wake-up descriptor: a byte on the wake-up pipe ends a read
    /// that would otherwise wait ten minutes, and input that came before is still read first.
    @Test func aWakeUpDescriptorEndsAWaitingRead() async throws {
        var pair: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        var wake: [Int32] = [0, 0]
        try #require(pipe(&wake) == 0)
        defer { [pair[1], wake[0], wake[1]].forEach { close($0) } }
        let channel = LineChannelBox(LineChannel(socket: SocketDescriptor(pair[0]), maxLineBytes: 1024))
        let (wakeRead, peer) = (wake[0], pair[1])
        let first = try await offPool { () -> String in
            _ = send(peer, "ping\n", 5, Int32(MSG_NOSIGNAL))
            guard case .line(let line) = channel.withLock({ $0.readLine(timeoutSeconds: 600, wake: wakeRead) }) else { return "not a line" }
            return String(decoding: line, as: UTF8.self)
        }
        #expect(first == "ping")
        let ended = Task { try await offPool { channel.withLock { $0.readLine(timeoutSeconds: 600, wake: wakeRead) } } }
        var byte: UInt8 = 1
        #expect(write(wake[1], &byte, 1) == 1)
        guard case .closed = try await ended.value else {
            Issue.record("the read did not end with the wake-up")
            return
        }
    }

    /// `stop` wakes the connection threads: an idle connection is closed without waiting for its idle timeout.
    @Test func stopClosesIdleConnectionsAtOnce() async throws {
        let folder = Folder()
        let (server, path) = try serving(folder)
        let idle = try idleConnection(path)
        defer { close(idle) }
        // Answered after the idle connection was accepted (one acceptor, in order).
        let ping = try await ask(try #require(ControlClient.connect(path: path)), #"{"command": "ping"}"#)
        #expect(ping["ok"] as? Bool == true)
        #expect(!closedByServer(idle))
        server.stop()
        try await waitUntil("the idle connection to be closed", timeout: .seconds(60)) { closedByServer(idle) }
    }

    @Test func aSlowRequestDoesNotHoldUpOthers() async throws {
        let folder = Folder()
        let gate = Gate()
        let (server, path) = try serving(folder, gate: gate)
        defer { server.stop() }
        let slowClient = try #require(ControlClient.connect(path: path))
        let slow = Task { () -> String? in
            let answer = try await ask(slowClient, #"{"id": "slow", "command": "roster.list", "account": "slow@example.org"}"#)
            return answer["id"] as? String
        }
        try await waitUntil("the slow request to reach the agent", timeout: .seconds(120)) { gate.arrived == 1 }
        // While it waits, another client is served.
        let other = try #require(ControlClient.connect(path: path))
        let ping = try await ask(other, #"{"command": "ping"}"#)
        #expect(ping["ok"] as? Bool == true)
        let status = try await offPool { try other.status(timeoutSeconds: 120) }
        #expect(status.accounts.count == 1)
        #expect(gate.arrived == 1)
        gate.open()
        #expect(try await slow.value == "slow")
    }

    @Test func decodingErrorsAreWordsNotSwiftTypes() async throws {
        let folder = Folder()
        let (server, path) = try serving(folder)
        defer { server.stop() }
        let client = try #require(ControlClient.connect(path: path))
        let cases = [
            (#"{"command": "roster.add", "account": "me@example.org", "arguments": []}"#, "expected a JSON object at arguments"),
            (#"{"command": "roster.add", "account": "me@example.org", "arguments": {"jid": 5}}"#, "expected a string at arguments.jid"),
            (#"{"command": 7}"#, "expected a string at command"),
            (#"{"command": "message.send", "account": "me@example.org", "arguments": {"to": {"jid": "a@b"}, "body": "x"}}"#, "expected a string at arguments.to"),
            (#"{"command": "requests.answer", "account": "me@example.org", "arguments": {"jid": "a@b", "accept": "yes"}}"#, "expected true or false at arguments.accept"),
        ]
        for (line, expected) in cases {
            let answer = try await ask(client, line)
            let message = (answer["error"] as? [String: Any])?["message"] as? String ?? ""
            #expect(message.contains(expected), "\(line): \(message)")
            for swiftName in ["Dictionary", "Array<", "String", "Int", "Swift.", "Optional"] {
                #expect(!message.contains(swiftName), "\(line): \(message)")
            }
        }
    }

    @Test func socketPathFollowsXDGRuntimeDir() {
        #expect(ControlSocketPath.resolve(environment: ["XDG_RUNTIME_DIR": "/run/user/1000"]) == "/run/user/1000/roost/control.sock")
        #expect(ControlSocketPath.resolve(environment: [:]) == "/tmp/roost-\(getuid())/control.sock")
    }

    @Test func notifierWritesReadyToTheNotifySocket() throws {
        let folder = Folder()
        try FileManager.default.createDirectory(atPath: folder.path, withIntermediateDirectories: true)
        let path = folder.path + "/notify"
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        #expect(UnixSocketAddress.with(path: path, { bind(fd, $0, $1) }) == 0)
        #expect(ServiceNotifier.notify("READY=1", environment: ["NOTIFY_SOCKET": path]))
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        #expect(n > 0 && String(decoding: buffer[0..<n], as: UTF8.self) == "READY=1")
        #expect(!ServiceNotifier.notify("READY=1", environment: [:]))
    }
}
