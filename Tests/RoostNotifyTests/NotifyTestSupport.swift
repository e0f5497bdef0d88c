import RoostCore
import Foundation
import RoostTestSupport
import Synchronization
@testable import RoostNotify

/// Helpers shared by the RoostNotify tests: fixture scripts, background servers, recording doubles.
enum NotifyFixtures {
    static let python = "/usr/bin/python3"

    static func path(_ name: String, file: String = #filePath) -> String {
        URL(fileURLWithPath: file).deletingLastPathComponent().appendingPathComponent("Fixtures/\(name)").path
    }

    static func temporaryDirectory() -> String {
        let path = NSTemporaryDirectory() + "roost-notify-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Runs a program to completion and returns its exit status and stdout.
    @discardableResult
    static func run(_ argv: [String]) -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: argv[0])
        process.arguments = Array(argv.dropFirst())
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.standardError
        do { try process.run() } catch { return (-1, "") }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    static func message(_ body: String, from contact: String = "bob@example.org", name: String = "Bob Example",
                        account: String = "alice@example.org", at timestamp: Int64 = Int64(Date().timeIntervalSince1970 * 1000),
                        groupchat: Bool = false, mentions: Bool = false, avatar: String? = nil) -> IncomingMessage {
        IncomingMessage(account: account, conversation: contact, from: contact + "/phone", displayName: name, body: body,
                        isGroupchat: groupchat, mentionsUser: mentions, timestamp: timestamp, avatarPath: avatar)
    }

    static func config(_ notify: [String: String], sinks: [String: [String: String]] = [:]) -> NotifyConfig {
        let (config, problems) = NotifyConfig.parse(notify: notify, sinks: sinks)
        precondition(problems.isEmpty, "\(problems)")
        return config
    }

    /// Polls `condition` every 50 ms for up to `seconds`.
    static func eventually(_ seconds: Double = 5, _ condition: () async -> Bool) async -> Bool {
        (try? await waitUntil("a condition", timeout: .milliseconds(Int(seconds * 1000)), every: .milliseconds(50)) {
            await condition()
        }) != nil
    }
}

/// A helper program running in the background, killed when `stop()` is called or when the test process
/// exits (Fixtures/supervise.py kills it at EOF on its stdin), so no server outlives the tests.
final class BackgroundProcess: @unchecked Sendable {
    private let process = Process()
    private let stdin = Pipe()
    private let stdout = Pipe()

    init(_ argv: [String]) throws {
        process.executableURL = URL(fileURLWithPath: NotifyFixtures.python)
        process.arguments = [NotifyFixtures.path("supervise.py")] + argv
        process.standardInput = stdin
        process.standardOutput = stdout
        // Our ends of the pipes must not leak into this or later children, or EOF never comes.
        _ = fcntl(stdin.fileHandleForWriting.fileDescriptor, F_SETFD, FD_CLOEXEC)
        _ = fcntl(stdout.fileHandleForReading.fileDescriptor, F_SETFD, FD_CLOEXEC)
        try process.run()
    }

    /// The first line the program prints (e.g. its port).
    func firstLine() -> String {
        var data = Data()
        while !data.contains(0x0A) {
            let chunk = stdout.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            data.append(chunk)
        }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
    }

    func stop() {
        try? stdin.fileHandleForWriting.write(contentsOf: Data("\n".utf8))
        try? stdin.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    deinit {
        try? stdin.fileHandleForWriting.close()
    }
}

/// Every log line, to check what was (and was not) logged.
final class LogCollector: Sendable {
    private let lines = Mutex<[(LogLevel, String)]>([])

    var log: @Sendable (LogLevel, String) -> Void {
        { level, line in self.lines.withLock { $0.append((level, line)) } }
    }

    func count(_ level: LogLevel, containing text: String) -> Int {
        lines.withLock { $0.filter { $0.0 == level && $0.1.contains(text) }.count }
    }

    var all: String {
        lines.withLock { $0.map(\.1).joined(separator: "\n") }
    }
}

/// Records subscription answers given through notification buttons.
final class RecordingActions: NotificationActions {
    private let answers = Mutex<[(String, String, Bool)]>([])

    func answerSubscription(account: String, jid: String, accept: Bool) async {
        answers.withLock { $0.append((account, jid, accept)) }
    }

    var recorded: [(account: String, jid: String, accept: Bool)] {
        answers.withLock { $0.map { (account: $0.0, jid: $0.1, accept: $0.2) } }
    }

    /// A stand-in for the agent's signed tokens: what the link names, readable in the test.
    func pushActionToken(_ action: String, account: String, target: String) -> String? { "\(action)~\(target)" }
}

/// A sink that keeps what it receives, for the rules tests.
final class RecordingSink: NotificationSink {
    let name: String
    let typeName = "recording"
    private let received = Mutex<[OutgoingNotification]>([])

    init(name: String) {
        self.name = name
    }

    func deliver(_ notification: OutgoingNotification) async throws(NotifyError) {
        received.withLock { $0.append(notification) }
    }

    var notifications: [OutgoingNotification] {
        received.withLock { $0 }
    }
}

/// A clock the test sets.
final class TestClock: Sendable {
    private let current: Mutex<Date>

    init(_ date: Date) {
        current = Mutex(date)
    }

    func set(_ date: Date) { current.withLock { $0 = date } }
    func advance(_ seconds: Double) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }

    var clock: NotifyClock {
        NotifyClock(now: { self.current.withLock { $0 } }, timeZone: TimeZone(identifier: "UTC")!)
    }
}

/// Ends the notifier's coalescing windows when the test says so (`NotifyClock.wait`) instead of after their
/// seconds: what a test checks inside a window is then inside it however slow the machine is.
final class WindowGate: Sendable {
    private let state = Mutex<(ended: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    /// The system's time, with windows that last until `endWindows()`.
    var clock: NotifyClock {
        NotifyClock(now: { Date() }, wait: { _ in await self.wait() })
    }

    private func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state in
                if !state.ended { state.waiting.append(continuation) }
                return state.ended
            }
            if now { continuation.resume() }
        }
    }

    /// Ends the open windows, and every later one as soon as it opens.
    func endWindows() {
        let waiting = state.withLock { state in
            state.ended = true
            defer { state.waiting.removeAll() }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }
}
