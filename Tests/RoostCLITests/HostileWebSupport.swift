import Foundation
import RoostCore
import RoostArchive
import RoostTestSupport

/// An archive of the test's own (written through the archive's writer, files through the file store) served by
/// `roost serve`, and Python's HTTP client (Tests/RoostCLITests/Fixtures/web_client.py) to talk to it.
final class WebSandbox: @unchecked Sendable {
    let directory: TestDirectory
    var archive: String { directory.path + "/data/archive.sqlite" }
    var config: String { directory.path + "/config.ini" }
    static let account = "me@example.org"
    static let t0: Int64 = 1_768_478_400_000

    init(_ label: String = "roost-web") throws {
        directory = try TestDirectory(label)
        try FileManager.default.createDirectory(atPath: directory.path + "/data", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: directory.path + "/run", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        try "[archive]\npath = \(archive)\n".write(toFile: config, atomically: true, encoding: .utf8)
    }

    var environment: [String: String] { ["XDG_RUNTIME_DIR": directory.path + "/run"] }

    func commit(_ events: [ArchiveEvent]) throws {
        let writer = try ArchiveWriter(path: archive, durability: .off)
        _ = try writer.commitBlocking(events)
    }

    /// A message from `peer` (a room occupant `room/nick` when `room`).
    static func message(_ body: String?, seconds: Int64, peer: String = "alice@example.com", room: Bool = false, nick: String? = nil,
                        attachments: [AttachmentRecord] = [], id: String = UUID().uuidString) -> ArchiveEvent {
        .message(MessageRecord(account: account, conversation: peer, direction: .incoming, kind: room ? .groupchat : .chat,
                               from: room ? peer + "/" + (nick ?? "someone") : peer + "/phone", to: account, senderName: nick, body: body,
                               timestamp: t0 + seconds * 1000, stanzaId: "s-\(id)", stanzaIdBy: room ? peer : account, stanzaIdTrusted: true,
                               messageId: id, attachments: attachments))
    }

    /// `data` in the archive's file store, as an attachment row in state `stored`.
    func storedAttachment(_ data: Data, name: String, mime: String) throws -> AttachmentRecord {
        let file = try FileStore(archivePath: archive).put(data)
        return AttachmentRecord(url: "https://files.example/\(name)", mime: mime, size: file.size, name: name, sha256: file.sha256, state: .stored)
    }

    struct Served {
        let process: RunningRoost
        let url: String
        let port: Int
    }

    /// `roost serve --port 0` on the archive, once it prints its address.
    func serve(_ extra: [String] = [], environment: [String: String] = [:]) throws -> Served {
        let process = try RoostBinary.start(["serve", "--config", config, "--port", "0", "--json", "-v"] + extra,
                                            environment: self.environment.merging(environment) { $1 })
        try process.waitForLog("\"url\"")
        let line = process.stderrSoFar.split(separator: "\n").first { $0.hasPrefix("{\"url\"") } ?? ""
        let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: String]
        guard let url = object?["url"], let port = URLComponents(string: url)?.port else {
            throw FixtureFailed(what: "roost serve printed no address: \(process.stderrSoFar)")
        }
        return Served(process: process, url: url, port: port)
    }

    /// The account's id in the archive (the pages' `a=`).
    func accountID() throws -> Int64 {
        Int64(try ArchiveCount.sqlite(archive, "SELECT id FROM accounts WHERE jid = '\(Self.account)'")
            .trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }
}

/// web_client.py's answer (its JSON object).
struct WebAnswer: @unchecked Sendable {
    let fields: [String: Any]
    subscript(key: String) -> Any? { fields[key] }
}

enum WebClient {
    static let script = FilesKit.fixtures + "web_client.py"

    /// Runs web_client.py (as `user`, through setpriv, when given) and returns its JSON answer.
    static func run(_ arguments: [String], user: UInt32? = nil, timeout: TimeInterval = 120) async throws -> WebAnswer {
        let argv: [String]
        let program: String
        if let user {
            program = "/usr/bin/setpriv"
            argv = ["--reuid=\(user)", "--regid=\(user)", "--clear-groups", "/usr/bin/python3", script] + arguments
        } else {
            program = "/usr/bin/python3"
            argv = [script] + arguments
        }
        let result = try await offPool { try RoostBinary.runProgram(program, argv, timeout: timeout) }
        guard result.status == 0, let object = FilesKit.jsonLines(result.stdout).last else {
            throw FixtureFailed(what: "web_client.py \(arguments.first ?? "") failed (\(result.status)): \(result.stdout)\(result.stderr)")
        }
        return WebAnswer(fields: object)
    }

    static func get(_ url: String, path: String, headers: [String] = []) async throws -> (status: Int, headers: [String: String], body: String) {
        let answer = try await run(["get", "--url", url, "--path", path] + headers.flatMap { ["--header", $0] })
        return (answer["status"] as? Int ?? 0, answer["headers"] as? [String: String] ?? [:], answer["body"] as? String ?? "")
    }
}

/// Peak memory of a process (VmHWM, bytes), from /proc.
func peakMemory(of pid: pid_t) -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
          let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") else { return nil }
    return kilobytes * 1024
}

