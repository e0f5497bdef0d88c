import Foundation
import RoostCore
import Testing
import RoostArchive
import RoostTestSupport
import RoostXMPP

/// Issue 29, items 1 and 3: other users of the same machine against the agent's web view and the runtime folder.
/// The other users are real ones: processes run under other uids with setpriv (CI runs as root; the uids need no
/// account), one of them in the role of the user running Roost where the runtime folder's fallback is at stake.
@Suite("End to end: other local users", .serialized,
       .requires(.server, .root, .tool("/usr/bin/setpriv"), .tool("/usr/bin/prlimit"), .tool("/usr/bin/ss")))
struct HostileLocalUsersTests {
    let server: TestServer

    init() throws {
        try TestRequirement.check(.server, .root, .tool("/usr/bin/setpriv"), .tool("/usr/bin/prlimit"), .tool("/usr/bin/ss"))
        server = try TestServer.require()
    }

    static func descriptors(of pid: pid_t) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd"))?.count ?? -1
    }

    /// Five other local users hold 1150 idle connections to the agent's web view while it has 1024 descriptors (the
    /// common limit): the view refuses what is over its limits at once (each user is told apart by the kernel and
    /// logged), closes what sent no request, and `roost status` and the user's own page keep working.
    @Test func idleConnectionsOfOtherUsersCannotStopTheAgent() async throws {
        let dir = try TestDirectory("roost-flood")
        let accounts = try await server.registeredAccounts(["alice"])
        let config = try server.roostConfig(in: dir, account: accounts[0].jid.description, password: accounts[0].password,
                                            extra: "\n[serve]\nenabled = true\nport = 0\n")
        let roost = try RoostBinary.start(["run", "--config", config, "-v"])
        defer { roost.stop(signal: SIGKILL) }
        try await offPool {
            try roost.waitForReady()
            try roost.waitFor(.serving)
        }
        // The agent as a systemd user service without LimitNOFILE starts with: 1024.
        let limited = try RoostBinary.runProgram("/usr/bin/prlimit", ["--pid", "\(roost.pid)", "--nofile=1024:1024"])
        #expect(limited.status == 0, "\(limited.stderr)")
        let url = try String(contentsOfFile: dir.path + "/run/roost/serve.url", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let port = try #require(URLComponents(string: url)?.port)
        let baseline = Self.descriptors(of: roost.pid)

        let users: [UInt32] = [65_530, 65_531, 65_532, 65_533, 65_534]
        let ready = dir.path + "/ready"
        try FileManager.default.createDirectory(atPath: ready, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o777])
        chmod(ready, 0o777)
        let attack = Task {
            try await withThrowingTaskGroup(of: WebAnswer.self) { group in
                for user in users {
                    group.addTask {
                        try await WebClient.run(["hold", "--port", "\(port)", "--count", "230", "--seconds", "16", "--ready", "\(ready)/\(user)"], user: user)
                    }
                }
                var answers: [WebAnswer] = []
                for try await answer in group { answers.append(answer) }
                return answers
            }
        }
        try await waitUntil("every other user's connections open", timeout: .seconds(120)) {
            ((try? FileManager.default.contentsOfDirectory(atPath: ready)) ?? []).count == users.count
        }
        // Roost has taken every connection the kernel queued for it (the listening socket's queue is empty).
        try await waitUntil("the view's accept queue drained", timeout: .seconds(30)) {
            let queue = try RoostBinary.runProgram("/usr/bin/ss", ["-Hltn", "sport = :\(port)"])
            return queue.stdout.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first == "0"
        }
        // The user's own tools still get through while the connections are held.
        let status = try await offPool { try RoostBinary.run(["status", "--json", "--config", config], timeout: 20) }
        #expect(status.status == 0, "roost status under the flood: \(status.status) \(status.stderr)")
        #expect(status.jsonLines.contains { $0["kind"] as? String == "account" && $0["state"] as? String == "online" }, "\(status.stdout)")
        let page = try await WebClient.get(url, path: "/")
        #expect(page.status == 200, "a page of the user's own under the flood")
        let during = Self.descriptors(of: roost.pid)
        #expect(during <= baseline + 128 + 32 + 10, "the view holds at most 128 connections of others: \(during) descriptors, \(baseline) before")
        // The attack reached the view: refusals, each naming its user.
        for user in users { #expect(roost.stderrSoFar.contains("refused a connection from 127.0.0.1 (user \(user))")) }

        let answers = try await attack.value
        #expect(answers.count == users.count)
        for answer in answers {
            let held = answer["held"] as? Int ?? 0
            #expect(answer["still_open"] as? Int == 0, "every connection was closed by the view: \(answer.fields)")
            #expect(held <= 32, "a user holds at most 32 at a time: \(answer.fields)")
            #expect(answer["connected"] as? Int == 230, "\(answer.fields)")
        }
        #expect(roost.stderrSoFar.contains("no whole request within 10 s") || roost.stderrSoFar.contains("refused"))
        #expect(roost.isRunning)
        let after = try await offPool { try RoostBinary.run(["status", "--config", config], timeout: 20) }
        #expect(after.status == 0)
    }

    // MARK: The runtime folder's fallback

    /// A user running Roost without XDG_RUNTIME_DIR (cron, su, ssh without logind): the fallback /tmp/roost-<uid>.
    struct Victim {
        let uid: UInt32
        let dir: TestDirectory
        let config: String
        var folder: String { "/tmp/roost-\(uid)" }
        var bin: String { dir.path + "/bin" }

        init() throws {
            uid = UInt32(41_000 + Int.random(in: 0..<20_000))
            dir = try TestDirectory("roost-victim")
            config = dir.path + "/config.ini"
            let archive = dir.path + "/data/archive.sqlite"
            try FileManager.default.createDirectory(atPath: dir.path + "/data", withIntermediateDirectories: true)
            try "[archive]\npath = \(archive)\n".write(toFile: config, atomically: true, encoding: .utf8)
            _ = try ArchiveWriter(path: archive, durability: .off).commitBlocking([WebSandbox.message("hello", seconds: 0)])
            // An xdg-open that records what it was asked to open.
            try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
            try "#!/bin/sh\necho \"$@\" >> \"\(dir.path)/opened\"\n".write(toFile: bin + "/xdg-open", atomically: true, encoding: .utf8)
            chmod(bin + "/xdg-open", 0o755)
            _ = try RoostBinary.runProgram("/bin/chown", ["-R", "\(uid):\(uid)", dir.path])
            chmod(dir.path, 0o755)
        }

        /// The environment without XDG_RUNTIME_DIR, HOME in its folder, the recording xdg-open first on PATH.
        var environment: [String: String] {
            var env = ProcessInfo.processInfo.environment
            env["XDG_RUNTIME_DIR"] = nil
            env["HOME"] = dir.path
            env["PATH"] = bin + ":/usr/bin:/bin"
            env["SWIFT_BACKTRACE"] = "enable=no"
            return env
        }

        func argv(_ arguments: [String]) -> [String] {
            ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", RoostBinary.path] + arguments + ["--config", config]
        }

        func run(_ arguments: [String]) throws -> RoostBinary.Result {
            try RoostBinary.runProgram("/usr/bin/setpriv", argv(arguments), environment: environment, timeout: 60)
        }

        func start(_ arguments: [String]) throws -> RunningRoost {
            try RoostBinary.startProgram("/usr/bin/setpriv", argv(arguments), environment: environment.merging(["XDG_RUNTIME_DIR": ""]) { $1 })
        }

        var opened: String { (try? String(contentsOfFile: dir.path + "/opened", encoding: .utf8)) ?? "" }
    }

    static func asUser(_ uid: UInt32, _ program: String, _ arguments: [String]) throws -> RoostBinary.Result {
        try RoostBinary.runProgram("/usr/bin/setpriv", ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", program] + arguments, timeout: 60)
    }

    /// Another user made /tmp/roost-<uid> first and left in it a file for the token to land in, a serve.url of their
    /// own and a socket that records what it is told: `roost serve --open` writes no token there, `--open` on a taken
    /// port does not open their address, and `roost status` does not talk to their socket.
    @Test func anotherUsersRuntimeFolderIsRefused() async throws {
        let victim = try Victim()
        let attacker: UInt32 = 65_534
        defer { _ = try? RoostBinary.runProgram("/bin/rm", ["-rf", victim.folder]) }
        let taken = try TakenPort()
        let planted = "http://127.0.0.1:\(taken.port)/planted-by-another-user"
        let listener = victim.folder + "/control.sock"
        let setup = """
            import os, socket, sys, time
            os.mkdir(sys.argv[1], 0o777); os.chmod(sys.argv[1], 0o777)
            for name in ("serve-open.html.tmp", "serve.url.tmp"):
                open(os.path.join(sys.argv[1], name), "w").close(); os.chmod(os.path.join(sys.argv[1], name), 0o666)
            with open(os.path.join(sys.argv[1], "serve.url"), "w") as f: f.write(sys.argv[2] + "\\n")
            s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[3]); os.chmod(sys.argv[3], 0o777); s.listen(5)
            print("ready", flush=True)
            s.settimeout(30)
            try:
                c, _ = s.accept(); print("connected", c.recv(4096), flush=True)
            except socket.timeout:
                print("nobody came", flush=True)
            """
        try setup.write(toFile: victim.dir.path + "/plant.py", atomically: true, encoding: .utf8)
        let plant = try RoostBinary.startProgram("/usr/bin/setpriv", ["--reuid=\(attacker)", "--regid=\(attacker)", "--clear-groups",
                                                                      "/usr/bin/python3", victim.dir.path + "/plant.py", victim.folder, planted, listener])
        defer { plant.stop(signal: SIGKILL) }
        try await offPool { try plant.waitForLog("ready") }
        var folderInfo = stat()
        #expect(lstat(victim.folder, &folderInfo) == 0 && folderInfo.st_uid == attacker, "the other user's folder is in place")

        // 1. roost serve --open: the page that carries the token is not written into that folder.
        let serve = try victim.start(["serve", "--port", "0", "--open", "--json"])
        defer { serve.stop() }
        try await offPool { try serve.waitForLog("could not open a browser") }
        #expect(serve.stderrSoFar.contains("refusing to use \(victim.folder): it belongs to another user (uid \(attacker))"), "\(serve.stderrSoFar)")
        let token = try #require(serve.stderrSoFar.split(separator: "\n").first { $0.hasPrefix("{\"url\"") }?
            .split(separator: "=").last.map { String($0.prefix(64)) })
        for name in ["serve-open.html.tmp", "serve-open.html", "serve.url.tmp"] {
            let text = try Self.asUser(attacker, "/bin/cat", [victim.folder + "/" + name]).stdout
            #expect(!text.contains(token), "\(name) holds the token")
        }
        #expect(victim.opened.isEmpty, "no browser was opened: \(victim.opened)")

        // 2. The port is taken: --open would fall back on serve.url, here the other user's.
        let taken2 = try victim.run(["serve", "--port", "\(taken.port)", "--open"])
        #expect(taken2.status == 70, "\(taken2.stdout)\(taken2.stderr)")
        #expect(taken2.stderr.contains("refusing to use \(victim.folder)"), "\(taken2.stderr)")
        #expect(!taken2.stdout.contains("planted-by-another-user") && victim.opened.isEmpty, "\(taken2.stdout) / \(victim.opened)")

        // 3. roost status does not connect to the other user's socket.
        let status = try victim.run(["status"])
        #expect(status.stdout.contains("agent: not asked: refusing to use \(victim.folder)"), "\(status.stdout)\(status.stderr)")
        plant.stop(signal: SIGTERM)
        #expect(!plant.stderrSoFar.contains("connected"), "\(plant.stderrSoFar)")
    }

    /// The user's own folder left open to others is made private, and a temporary file left in it (here a link to a
    /// file anyone reads) is replaced, never written through.
    @Test func theUsersOwnFolderIsMadePrivateAndLeftoversAreNotFollowed() async throws {
        let victim = try Victim()
        defer { _ = try? RoostBinary.runProgram("/bin/rm", ["-rf", victim.folder]) }
        let bait = victim.dir.path + "/world-readable"
        _ = try Self.asUser(victim.uid, "/bin/sh", ["-c", "umask 022; : > \(bait); mkdir -m 777 \(victim.folder); chmod 777 \(victim.folder); ln -s \(bait) \(victim.folder)/serve-open.html.tmp"])
        let serve = try victim.start(["serve", "--port", "0", "--open", "--json"])
        defer { serve.stop() }
        try await offPool { try serve.waitForLog("serving") }
        try await waitUntil("the browser asked to open the page", timeout: .seconds(30)) { !victim.opened.isEmpty }
        var info = stat()
        #expect(lstat(victim.folder, &info) == 0 && info.st_mode & 0o777 == 0o700, "the folder is private: \(String(info.st_mode & 0o777, radix: 8))")
        #expect(lstat(victim.folder + "/serve-open.html", &info) == 0 && info.st_mode & 0o777 == 0o600 && (info.st_mode & S_IFMT) == S_IFREG)
        #expect((try? Data(contentsOf: URL(fileURLWithPath: bait)))?.isEmpty == true, "nothing was written through the link")
        #expect(victim.opened.contains(victim.folder + "/serve-open.html"))
    }
}

/// A port that something else listens on.
final class TakenPort {
    let fd: Int32
    let port: Int

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && listen(fd, 4) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw FixtureFailed(what: "no port: \(String(cString: strerror(errno)))") }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(fd) }
}
