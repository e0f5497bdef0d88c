import Foundation
import RoostArchive
import RoostTestSupport

/// Runs the built `roost` binary (beside the test bundle, `RoostBinary.path`) against a temporary config
/// whose only setting is the archive path, and captures stdout, stderr and the exit status; a run that takes
/// longer than `timeout` is killed and reported.
final class ExportCLISandbox: Sendable {
    let folder: String
    var archive: String { folder + "/archive.sqlite" }
    var config: String { folder + "/config.ini" }

    static var binary: String { RoostBinary.path }

    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    init(archivePath: String? = nil) throws {
        folder = NSTemporaryDirectory() + "roost-export-cli-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try "[archive]\npath = \(archivePath ?? folder + "/archive.sqlite")\n".write(toFile: folder + "/config.ini", atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: folder + "/config.ini")
    }

    deinit { try? FileManager.default.removeItem(atPath: folder) }

    /// A small archive: two conversations and two accounts, Chinese text, a correction, chat states, presence.
    /// `bulk` adds that many filler messages (for tests that need a large export).
    func fillArchive(bulk: Int = 0) throws {
        let writer = try ArchiveWriter(path: archive, durability: .off)
        let t: Int64 = 1_768_478_400_000
        func message(_ body: String, _ seconds: Int64, peer: String = "alice@example.com", account: String = "me@example.org",
                     out: Bool = false, id: String, replaces: String? = nil) -> ArchiveEvent {
            .message(MessageRecord(account: account, conversation: peer, direction: out ? .outgoing : .incoming,
                                   from: out ? account + "/roost" : peer + "/phone", to: out ? peer : account, body: body,
                                   timestamp: t + seconds * 1000, stanzaId: "s-\(id)", stanzaIdBy: account, stanzaIdTrusted: replaces == nil,
                                   messageId: id, replaces: replaces))
        }
        _ = try writer.commitBlocking([
            .chatState(ChatStateRecord(account: "me@example.org", conversation: "alice@example.com", from: "alice@example.com/phone",
                                       state: .composing, timestamp: t - 500)),
            message("hello there", 0, id: "1"),
            message("helo", 10, out: true, id: "2"),
            message("hello", 12, out: true, id: "3", replaces: "2"),
            message("你好，明天见", 20, peer: "wang@example.cn", id: "4"),
            message("<script>alert(1)</script>", 30, id: "5"),
            message("work only", 40, peer: "boss@example.net", account: "work@example.net", id: "6"),
            .presence(PresenceRecord(account: "me@example.org", contact: "alice@example.com", resource: "phone",
                                     availability: .unavailable, timestamp: t + 50_000)),
        ])
        if bulk > 0 {
            _ = try writer.commitBlocking((0..<bulk).map { message(String(repeating: "filler text ", count: 20), 100 + Int64($0), id: "bulk\($0)") })
        }
    }

    func roost(_ arguments: [String], stdout: FileHandle? = nil, shell: String? = nil, timeout: TimeInterval = 120) throws -> Result {
        let process = Process()
        if let shell {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", shell + " \"$@\"", "sh", Self.binary, "--config", config] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: Self.binary)
            process.arguments = ["--config", config] + arguments
        }
        process.environment = ["HOME": folder, "PATH": "/usr/bin:/bin", "TZ": "UTC", "LANG": "C.UTF-8"]
        process.currentDirectoryURL = URL(fileURLWithPath: folder)
        let out = Pipe(), err = Pipe()
        process.standardOutput = stdout ?? out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // A hung export must fail the test, not the whole run: kill it at the deadline (the reads then end).
        let timedOut = TimeoutFlag()
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [process] in
            guard process.isRunning else { return }
            timedOut.set()
            kill(process.processIdentifier, SIGKILL)
        }
        nonisolated(unsafe) var outData = Data()
        let group = DispatchGroup()
        if stdout == nil {
            group.enter()
            DispatchQueue.global().async {
                outData = out.fileHandleForReading.readDataToEndOfFile()
                group.leave()
            }
        }
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        let stderr = String(decoding: errData, as: UTF8.self) + (timedOut.isSet ? "\n[killed: still running after \(Int(timeout)) s]" : "")
        return Result(status: timedOut.isSet ? -1 : process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self), stderr: stderr)
    }

    private final class TimeoutFlag: @unchecked Sendable {
        private let lock = NSLock()
        private var value = false
        func set() { lock.withLock { value = true } }
        var isSet: Bool { lock.withLock { value } }
    }

    func contents(_ name: String) throws -> String {
        try String(contentsOfFile: folder + "/" + name, encoding: .utf8)
    }

    func exists(_ name: String) -> Bool {
        FileManager.default.fileExists(atPath: folder + "/" + name)
    }

    /// Names in the folder other than the config and the archive.
    func leftovers() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).filter { !$0.hasPrefix("archive.sqlite") && $0 != "config.ini" }.sorted()
    }
}
