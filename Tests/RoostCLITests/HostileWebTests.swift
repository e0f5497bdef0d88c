import Foundation
import RoostCore
import Testing
import RoostAgent
import RoostArchive
@testable import RoostServe
import RoostTestSupport

/// Issue 29: the web view against hostile input and hostile local users — `roost serve` on an archive of the
/// test's own, reached with Python's HTTP client (web_client.py), never with Roost's code. Each attack is first
/// shown to reach Roost (a log line, a counter, a served page).
@Suite("Hostile input: the web view", .serialized)
struct HostileWebTests {
    // MARK: Live streams

    /// A reader that takes nothing (a tab asleep, a client that never reads) is dropped once 1 MiB waits for it; the
    /// process lives on and serves others.
    @Test func aLiveReaderThatTakesNothingIsDroppedNotKept() async throws {
        let sandbox = try WebSandbox()
        let filler = String(repeating: "words that fill a bubble ", count: 800)
        try sandbox.commit((0..<150).map { WebSandbox.message("\($0) \(filler)", seconds: Int64($0)) })
        let served = try sandbox.serve()
        defer { served.process.stop() }
        let account = try sandbox.accountID()
        let path = "/events?a=\(account)&j=alice%40example.com&after=0&since=0"
        // The reader sleeps until the test has seen the server drop it (at most 120 s), however slow the machine.
        let woken = sandbox.directory.path + "/wake-the-reader"
        async let stalled = WebClient.run(["stall", "--url", served.url, "--path", path, "--seconds", "120", "--until", woken])
        try await offPool { try served.process.waitForLog("GET /events", timeout: 60) }
        // More arrives while the reader sleeps: each commit wakes the stream, which is sent what is new.
        var round = 0
        try? await waitUntil("the server to drop the sleeping reader", timeout: .seconds(90), every: .milliseconds(500)) {
            if served.process.stderrSoFar.contains("dropped a live page") { return true }
            round += 1
            try sandbox.commit((0..<150).map { WebSandbox.message("r\(round) \($0) \(filler)", seconds: Int64(round * 1000 + $0)) })
            return false
        }
        try await offPool { try served.process.waitForLog("dropped a live page that does not take its updates", timeout: 30) }
        _ = FileManager.default.createFile(atPath: woken, contents: nil)
        let reader = try await stalled
        #expect(reader["closed"] as? Bool == true, "the stream was closed by the server: \(reader)")
        #expect(served.process.isRunning)
        let page = try await WebClient.get(served.url, path: "/")
        #expect(page.status == 200)
    }

    /// An imported carriage return (`\r`, an XML import's `&#13;`) ends a line for a browser's event-stream parser:
    /// it must never start a field of its own.
    @Test func carriageReturnsCannotStartEventFields() async throws {
        let sandbox = try WebSandbox()
        try sandbox.commit([WebSandbox.message("first", seconds: 0)])
        let served = try sandbox.serve()
        defer { served.process.stop() }
        let account = try sandbox.accountID()
        let marker = "cr-\(UUID().uuidString.prefix(8))"
        let path = "/events?a=\(account)&j=alice%40example.com&after=0&since=0"
        // The stream is open (its response head came) before the message is committed; the reader stops once the
        // marker has come (or after 60 s).
        let open = sandbox.directory.path + "/stream-open"
        async let stream = WebClient.run(["events", "--url", served.url, "--path", path, "--seconds", "60", "--ready", open,
                                          "--stop-at", marker])
        try await waitUntil("the event stream open", timeout: .seconds(60)) { FileManager.default.fileExists(atPath: open) }
        try sandbox.commit([WebSandbox.message("\(marker)\rid: 999999999999-0-0.0.0\revent: conversations\rretry: 1\r\ndata: x", seconds: 10)])
        let answer = try await stream
        let events = try #require(answer["events"] as? [[[String]]])
        let withMarker = events.filter { $0.contains { $0.count == 2 && $0[0] == "data" && $0[1].contains(marker) } }
        #expect(withMarker.count == 1, "the message reached the stream: \(events)")
        for event in withMarker {
            #expect(!event.contains { $0.first == "event" || $0.first == "retry" }, "\(event)")
            #expect(!event.contains { $0.first == "id" && $0.last == "999999999999-0-0.0.0" }, "\(event)")
        }
    }

    // MARK: Forms

    /// `back=/%09/evil.example/` decodes to "/\t/evil.example/"; a browser drops the tab and follows `//evil.example/`.
    @Test func markReadGoesBackOnlyToThisServersPages() async throws {
        let sandbox = try WebSandbox()
        try sandbox.commit([WebSandbox.message("hello", seconds: 0)])
        let served = try sandbox.serve()
        defer { served.process.stop() }
        let account = try sandbox.accountID()
        let page = "/c?a=\(account)&j=alice@example.com"
        for back in ["/%09/evil.example/", "/%0A/evil.example/", "%5C%5Cevil.example/", "//evil.example/", "https://evil.example/"] {
            let answer = try await WebClient.run(["post", "--url", served.url, "--page", page, "--action", "/read",
                                                  "--field", "a=\(account)", "--field", "j=alice%40example.com", "--field", "back=\(back)"])
            let location = (answer["headers"] as? [String: String])?["location"] ?? ""
            #expect(answer["status"] as? Int == 303, "\(answer)")
            #expect(location == page, "back=\(back) sent the browser to \(location.debugDescription)")
        }
        try await offPool { try served.process.waitForLog("marked alice@example.com read") }
        // Our own page is still where it goes back to.
        let own = try await WebClient.run(["post", "--url", served.url, "--page", page, "--action", "/read", "--field", "a=\(account)",
                                           "--field", "j=alice%40example.com", "--field", "back=%2Fc%3Fa%3D\(account)%26j%3Dalice%40example.com%26states%3D1"])
        #expect((own["headers"] as? [String: String])?["location"] == page + "&states=1", "\(own)")
    }

    // MARK: Pictures

    /// A 9000×9000 PNG (81 megapixels, 243 MB decoded; the review's was 20000×20000) is not decoded for its preview,
    /// and a file typed image/png that holds SVG is never read by gdk-pixbuf's SVG loader.
    @Test func aTooLargePictureIsNotDecodedAndSVGIsNotReadAsAPicture() async throws {
        let sandbox = try WebSandbox()
        let png = sandbox.directory.path + "/big.png"
        try await FilesKit.fixture("make_png.py", [png, "9000", "9000", "10", "200", "10"])
        let big = try sandbox.storedAttachment(try Data(contentsOf: URL(fileURLWithPath: png)), name: "big.png", mime: "image/png")
        let svgText = "<svg xmlns='http://www.w3.org/2000/svg' width='4000' height='4000'><rect width='4000' height='4000' fill='red'/></svg>"
        let svg = try sandbox.storedAttachment(Data(svgText.utf8), name: "photo.png", mime: "image/png")
        try sandbox.commit([WebSandbox.message(nil, seconds: 0, attachments: [big], id: "big"),
                            WebSandbox.message(nil, seconds: 1, attachments: [svg], id: "svg")])
        let messages = try ArchiveCount.sqlite(sandbox.archive, "SELECT id FROM messages ORDER BY id")
            .split(separator: "\n").map { String($0) }
        #expect(messages.count == 2)
        let served = try sandbox.serve()
        defer { served.process.stop() }
        let before = try #require(peakMemory(of: served.process.pid))

        let large = try await WebClient.get(served.url, path: "/preview/\(messages[0])/0")
        #expect(large.status == 422, "\(large.status) \(large.body.prefix(200))")
        #expect(large.body.contains("9000×9000"), "the server read the size and answered: \(large.body)")
        let peak = try #require(peakMemory(of: served.process.pid))
        #expect(peak - before < 100 << 20, "decoding 243 MB was avoided: peak \(peak >> 20) MiB, \(before >> 20) MiB before")
        // The file itself is still one click away.
        let original = try await WebClient.run(["get", "--url", served.url, "--path", "/file/\(messages[0])/0"])
        #expect(original["status"] as? Int == 200 && original["length"] as? Int == Int(big.size ?? 0))

        let typed = try await WebClient.get(served.url, path: "/preview/\(messages[1])/0")
        #expect(typed.status == 200)
        #expect(typed.body == svgText, "the SVG is sent as the bytes it is, never rendered into a copy")
        #expect(typed.headers["content-type"] == "image/png" && typed.headers["x-content-type-options"] == "nosniff")
        let copies = (try? FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory()))?
            .filter { $0.hasPrefix("roost-serve-previews-\(served.process.pid)-") } ?? []
        let made = try copies.flatMap { try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory() + "/" + $0) }
        #expect(made.isEmpty, "no preview copy was made: \(made)")
    }

    // MARK: Names

    /// U+202E in a file name or a nick is shown as an escape, never obeyed: "photo‮gpj.exe" would read "photoexe.jpg".
    @Test func bidirectionalControlsInNamesAreShownNotObeyed() async throws {
        let sandbox = try WebSandbox()
        let file = try sandbox.storedAttachment(Data("MZ not a picture".utf8), name: "photo\u{202E}gpj.exe", mime: "application/octet-stream")
        try sandbox.commit([
            WebSandbox.message("here", seconds: 0, attachments: [file]),
            WebSandbox.message("hi all", seconds: 5, peer: "room@conference.example", room: true, nick: "eve\u{202E}nimda"),
        ])
        let served = try sandbox.serve()
        defer { served.process.stop() }
        let account = try sandbox.accountID()
        for (page, shown) in [("/c?a=\(account)&j=alice%40example.com", "photo\\u{202e}gpj.exe"),
                              ("/c?a=\(account)&j=room%40conference.example", "eve\\u{202e}nimda"), ("/", "eve\\u{202e}nimda")] {
            let answer = try await WebClient.get(served.url, path: page)
            #expect(answer.status == 200)
            #expect(answer.body.contains(shown), "\(page) shows the name with the control visible")
            #expect(!answer.body.unicodeScalars.contains { (0x202A...0x202E).contains($0.value) || (0x2066...0x2069).contains($0.value) },
                    "\(page) holds no raw bidirectional control")
        }
    }

    // MARK: Exports

    /// A conversation whose address starts with `-` is exported by the web view (it once reached tar as an option).
    @Test func aConversationNamedLikeAnOptionIsExported() async throws {
        let sandbox = try WebSandbox()
        try sandbox.commit([WebSandbox.message("options are not names", seconds: 0, peer: "-w@example.com"),
                            WebSandbox.message("nor are these", seconds: 1, peer: "--checkpoint-action@example.com")])
        let served = try sandbox.serve()
        defer { served.process.stop() }
        let account = try sandbox.accountID()
        for jid in ["-w@example.com", "--checkpoint-action@example.com"] {
            let encoded = jid.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let answer = try await WebClient.run(["post", "--url", served.url, "--page", "/c?a=\(account)&j=\(encoded)", "--action", "/export",
                                                  "--field", "a=\(account)", "--field", "j=\(encoded)", "--field", "format=html"])
            #expect(answer["status"] as? Int == 200, "\(jid): \(answer)")
            let disposition = (answer["headers"] as? [String: String])?["content-disposition"] ?? ""
            #expect(disposition.contains("filename=\"_-") && disposition.hasSuffix("-html.tar\""), "\(disposition)")
            #expect((answer["length"] as? Int ?? 0) > 1000)
        }
    }

    /// Another export hard-linking the same stored file while tar reads it changes the file's ctime: GNU tar says
    /// "file changed as we read it" and exits 1. The file never changes (its name is its hash), so the pack holds.
    @Test func packingIsNotFooledByAnotherExportLinkingTheSameFile() async throws {
        let directory = try TestDirectory("roost-pack")
        let stored = directory.path + "/stored"
        try Data(repeating: 7, count: 48 << 20).write(to: URL(fileURLWithPath: stored))
        try FileManager.default.createDirectory(atPath: directory.path + "/export/conversation/attachments", withIntermediateDirectories: true)
        #expect(link(stored, directory.path + "/export/conversation/attachments/photo.jpg") == 0)
        // The other export: links and unlinks the same file as fast as it can while tar runs.
        let running = Shared(true)
        let hammer = Thread {
            var n = 0
            while running.value {
                let other = directory.path + "/other-\(n % 4)"
                link(stored, other)
                unlink(other)
                n += 1
            }
        }
        hammer.start()
        defer { running.value = false }
        var failures: [String] = []
        for round in 0..<5 {
            if let failure = ExportJobs.pack(folder: directory.path + "/export", name: "conversation", into: directory.path + "/out-\(round).tar") {
                failures.append(failure)
            }
        }
        running.value = false
        #expect(failures.isEmpty, "\(failures)")
        let listed = try RoostBinary.runProgram("/usr/bin/tar", ["-tvf", directory.path + "/out-0.tar"])
        #expect(listed.stdout.contains("conversation/attachments/photo.jpg") && listed.stdout.contains("50331648"), "\(listed.stdout)")
        // A real failure is still one: a name that is not there.
        #expect(ExportJobs.pack(folder: directory.path + "/export", name: "missing", into: directory.path + "/bad.tar")?.contains("missing") == true)
    }

    /// A server killed during an export leaves its folder in $TMPDIR; the next server removes it.
    @Test func exportFoldersOfServersThatAreGoneAreSwept() async throws {
        let sandbox = try WebSandbox()
        try sandbox.commit([WebSandbox.message("hello", seconds: 0)])
        let tmp = sandbox.directory.path + "/tmp"
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        // A process id that no process has (the largest possible one is never handed out while the test runs).
        let gone = tmp + "/\(ExportJobs.folderPrefix)4194303-AbCdEf"
        let alive = tmp + "/\(ExportJobs.folderPrefix)\(getpid())-AbCdEf"
        for folder in [gone, alive] { try FileManager.default.createDirectory(atPath: folder + "/x", withIntermediateDirectories: true) }
        let served = try sandbox.serve(environment: ["TMPDIR": tmp])
        defer { served.process.stop() }
        #expect(!FileManager.default.fileExists(atPath: gone), "the folder of a server that is gone is removed")
        #expect(FileManager.default.fileExists(atPath: alive), "a running process's folder stays")
    }

    // MARK: Stopping

    /// Stopping cancels the workers and returns only once each has handed back its result: the review's crash was a
    /// preview worker finishing after stop() and calling into the freed view (`[unowned self]`).
    @Test func stoppingWaitsForItsWorkersBeforeFreeing() async throws {
        let sandbox = try WebSandbox()
        let png = sandbox.directory.path + "/photo.png"
        try await FilesKit.fixture("make_png.py", [png, "2400", "1800", "200", "10", "10"])
        let photo = try sandbox.storedAttachment(try Data(contentsOf: URL(fileURLWithPath: png)), name: "photo.png", mime: "image/png")
        try sandbox.commit([WebSandbox.message(nil, seconds: 0, attachments: [photo])])
        let message = try ArchiveCount.sqlite(sandbox.archive, "SELECT id FROM messages").trimmingCharacters(in: .whitespacesAndNewlines)
        let gate = GatedThumbnails()
        var options = ServeOptions(archivePath: sandbox.archive, log: ServeLog(info: { _ in }, warning: { _ in }, debug: { _ in }))
        options.port = 0
        options.thumbnails = gate
        let server = try await WebServer.start(options)
        // A page asks for the picture's preview; the copy is being made (the worker waits at the gate).
        async let preview = WebClient.run(["get", "--url", server.url, "--path", "/preview/\(message)/0"])
        try await waitUntil("the preview worker at work", timeout: .seconds(60)) { gate.entered }
        await server.stop()
        gate.events.append("stop returned")
        gate.release()
        _ = try? await preview
        #expect(gate.events.value == ["worker cancelled", "worker returned", "stop returned"], "\(gate.events.value)")
        // The worker's own thread (named for the kernel; other tests' workers may run beside it) is let go.
        let worker = try #require(gate.workerThread.value)
        try await waitUntil("the preview worker's thread \(worker) is gone", timeout: .seconds(20), every: .milliseconds(10)) {
            !FileManager.default.fileExists(atPath: worker)
        }
    }
}

/// The suite's crash collection (contrib/scripts/test, `CoreDumps`): a roost that crashes fails the test that ran it,
/// and the failure carries every thread's stack from its core. Here roost is made to crash (SIGSEGV), and the test
/// passes only when that issue, with the stacks, was recorded.
@Suite("The suite's crash collection")
struct CrashCollectionTests {
    @Test func aCrashOfRoostFailsItsTestWithEveryThreadsStack() throws {
        let sandbox = try WebSandbox()
        try sandbox.commit([WebSandbox.message("hello", seconds: 0)])
        let served = try sandbox.serve()
        withKnownIssue("roost is made to crash: its test must fail with the signal and the stacks of its core") {
            served.process.stop(signal: SIGSEGV)
        } matching: { issue in
            let text = issue.comments.map(\.rawValue).joined(separator: "\n")
            return text.contains("roost crashed (SIGSEGV)") && text.contains("backtrace (gdb, core of pid \(served.process.pid))")
                && text.contains("g_main_loop_run")
        }
    }
}

/// A value shared with the tests' own threads, under a lock.
final class Shared<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}

extension Shared where Value == [String] {
    func append(_ item: String) { lock.withLock { stored.append(item) } }
}

/// The real thumbnail maker (gdk-pixbuf) behind a gate the test opens: the worker waits there until the server
/// cancels it (or the test lets it go), so the order of stopping and the worker's end can be seen.
final class GatedThumbnails: ThumbnailMaker, @unchecked Sendable {
    private let real = PixbufThumbnails()
    private let condition = NSCondition()
    private var isEntered = false
    private var released = false
    let events = Shared<[String]>([])

    var entered: Bool { condition.withLock { isEntered } }
    /// The worker's thread in /proc (`/proc/PID/task/TID`), set when it enters.
    let workerThread = Shared<String?>(nil)

    func release() {
        condition.withLock {
            released = true
            condition.broadcast()
        }
    }

    func probe(_ path: String) -> PictureProbe? { real.probe(path) }

    func thumbnail(of source: String, to destination: String, maxSide: Int,
                   isCancelled: @escaping @Sendable () -> Bool) -> (path: String, width: Int, height: Int)? {
        workerThread.value = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")).map { "/proc/" + $0 }
        condition.withLock {
            isEntered = true
            while !released && !isCancelled() { _ = condition.wait(until: Date().addingTimeInterval(0.05)) }
        }
        if isCancelled() { events.append("worker cancelled") }
        defer { events.append("worker returned") }
        return real.thumbnail(of: source, to: destination, maxSide: maxSide, isCancelled: isCancelled)
    }
}
