public import Foundation
public import RoostCore

/// The CLI's side of the control socket: one connection, requests answered in order.
public final class ControlClient: Sendable {
    private let socket: SocketDescriptor
    /// Requests are strictly one at a time on a connection.
    private let channel: LineChannelBox

    private init(socket: SocketDescriptor) {
        self.socket = socket
        channel = LineChannelBox(LineChannel(socket: socket, maxLineBytes: 64 << 20))
    }

    /// Connects to the agent; nil when no agent listens (no socket, or a stale one), or when the socket's folder is
    /// not safe (`RuntimeFolder.check`: another user's `/tmp/roost-<uid>` may hold a socket of theirs, which would
    /// read what the CLI sends; `unsafeFolder` says why).
    public static func connect(path: String) -> ControlClient? {
        guard unsafeFolder(path: path) == nil else { return nil }
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        let descriptor = SocketDescriptor(fd)
        let result = UnixSocketAddress.with(path: path) { Glibc.connect(fd, $0, $1) } ?? -1
        guard result == 0 else { return nil }
        return ControlClient(socket: descriptor)
    }

    /// Why the folder of the socket at `path` must not be used, or nil when it may.
    public static func unsafeFolder(path: String) -> RuntimeFolderError? {
        do {
            try RuntimeFolder.check((path as NSString).deletingLastPathComponent)
            return nil
        } catch {
            return error
        }
    }

    /// Sends one raw line and returns the raw answer line (for tests and debugging); nil when the agent hung up.
    public func exchange(_ line: Data, timeoutSeconds: Int = 120) -> Data? {
        channel.withLock { channel -> Data? in
            // Even when the write fails (the agent refused a request too large and stopped reading), its answer
            // may be waiting to be read.
            _ = channel.writeLine(line)
            if case .line(let answer) = channel.readLine(timeoutSeconds: timeoutSeconds) { return answer }
            return nil
        }
    }

    /// Runs `action` in the agent for `account` (nil: the agent's only account); `progress` hears how a long
    /// transfer advances.
    public func perform<Action: AccountAction>(_ action: Action, account: String?,
                                               progress: ((TransferProgress) -> Void)? = nil) throws(ActionFailure) -> Action.Result {
        let request = ControlRequest(id: .number(1), command: Action.command, account: account, arguments: action,
                                     progress: progress == nil ? nil : true)
        guard let progress else { return try decode(Action.Result.self, from: exchange(ControlJSON.encode(request))) }
        let answer = channel.withLock { channel -> Data? in
            guard channel.writeLine(ControlJSON.encode(request)) else { return nil }
            while case .line(let line) = channel.readLine(timeoutSeconds: 600) {
                guard let interim = try? JSONDecoder().decode(ControlProgress.self, from: line) else { return line }
                progress(interim.progress)
            }
            return nil
        }
        return try decode(Action.Result.self, from: answer)
    }

    /// Downloads attachments in the agent (which may take long: files can be large).
    public func fetchFiles(_ request: FileFetchRequest) throws(ActionFailure) -> [FileFetchRequest.Result] {
        let line = ControlJSON.encode(ControlRequest(id: .number(1), command: FileFetchRequest.command, account: nil, arguments: request))
        return try decode([FileFetchRequest.Result].self, from: exchange(line, timeoutSeconds: 6 * 3600))
    }

    public func status(timeoutSeconds: Int = 30) throws(ActionFailure) -> AgentStatusReport {
        let request = ControlRequest<NoArguments>(id: .number(1), command: "status", account: nil, arguments: nil)
        return try decode(AgentStatusReport.self, from: exchange(ControlJSON.encode(request), timeoutSeconds: timeoutSeconds))
    }

    private func decode<Result: Codable>(_ type: Result.Type, from answer: Data?) throws(ActionFailure) -> Result {
        guard let answer else { throw ActionFailure(.connection, "the agent closed the control connection without answering") }
        let decoder = JSONDecoder()
        guard let header = try? decoder.decode(ControlResponseHeader.self, from: answer) else {
            throw ActionFailure(.internalError, "the agent sent an answer Roost cannot read")
        }
        guard header.ok else { throw header.error ?? ActionFailure(.internalError, "the agent reported an unnamed error") }
        do {
            return try decoder.decode(ControlSuccess<Result>.self, from: answer).result
        } catch {
            throw ActionFailure(.internalError, "the agent's answer has an unexpected shape: \(DecodingProblem.describe(error))")
        }
    }
}

/// Serialises use of a connection's channel (a class with a read buffer) across callers.
final class LineChannelBox: @unchecked Sendable {
    private let lock = NSLock()
    private let channel: LineChannel

    init(_ channel: LineChannel) { self.channel = channel }

    func withLock<T>(_ body: (LineChannel) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(channel)
    }
}
