import Foundation
import RoostCore
import Testing
import RoostArchive
import RoostTestSupport
import RoostXMPP

/// Files end to end: bob's independent client (slixmpp: XEP-0363 upload, XEP-0066 link) shares files with
/// alice, whose `roost run` keeps them; exports carry them; `roost send --file` sends them back.
@Suite("End to end: attachment files", .enabled(if: TestServer.isAvailable), .serialized)
struct FilesEndToEndTests {
    let server: TestServer

    init() throws { server = try TestServer.require() }

    struct Pair {
        let dir: TestDirectory
        let alice: JID
        let alicePassword: String
        let bob: JID
        let bobPassword: String
    }

    /// alice (Roost's account) and bob (the slixmpp peer), contacts both ways.
    private func pair() async throws -> Pair {
        let (aliceClient, alice, alicePassword) = try await server.registeredClient("alice")
        let (bobClient, bob, bobPassword) = try await server.registeredClient("bob")
        try await FilesKit.befriend(server, aliceClient, alice, bobClient, bob)
        await aliceClient.disconnect()
        await bobClient.disconnect()
        return Pair(dir: try TestDirectory("roost-files"), alice: alice, alicePassword: alicePassword, bob: bob, bobPassword: bobPassword)
    }

    private func config(_ pair: Pair, files: String, name: String = "config.ini") throws -> String {
        let path = try server.roostConfig(in: pair.dir, account: pair.alice.description, password: pair.alicePassword,
                                          extra: "[files]\n\(files)\n")
        if name == "config.ini" { return path }
        let moved = pair.dir.path + "/" + name
        try FileManager.default.moveItem(atPath: path, toPath: moved)
        return moved
    }

    private func mode(_ path: String) -> Int {
        var info = stat()
        stat(path, &info)
        return Int(info.st_mode & 0o777)
    }

    // MARK: - Receiving, keeping, showing, exporting

    @Test func keepsUploadedFilesAndCarriesThemIntoEveryExport() async throws {
        let pair = try await pair()
        let dir = pair.dir.path
        let config = try config(pair, files: "allow_private_addresses = true")
        let roost = try RoostBinary.start(["run", "--config", config, "-v"])
        defer { roost.stop(signal: SIGKILL) }
        try await roost.ready()

        // A small red picture and a large blue one (over 1600 px: the html export shows a thumbnail).
        let red = dir + "/bob.png", blue = dir + "/holiday.png"
        try await FilesKit.fixture("make_png.py", [red, "640", "480", "220", "20", "20"])
        try await FilesKit.fixture("make_png.py", [blue, "2400", "1800", "20", "40", "220"])
        let liveTarget = try pair.alice.with(resource: "roost").description
        for file in [red, blue] {
            let sent = try await FilesKit.peer(pair.bob, pair.bobPassword, ["upload", liveTarget, file])
            #expect(sent.contains { ($0["url"] as? String)?.hasSuffix("/" + (file as NSString).lastPathComponent) == true })
        }
        let kept = try await FilesKit.waitForFile(config: config) { $0["name"] as? String == "bob.png" && $0["state"] as? String == "stored" }
        #expect(kept["sha256"] as? String == (try await FilesKit.sha256(red)))
        let stored = try #require(kept["path"] as? String)
        #expect(FileManager.default.contentsEqual(atPath: stored, andPath: red), "the exact bytes are kept")
        #expect(stored.hasPrefix(dir + "/data/files/sha256/"))
        #expect(mode(stored) == 0o600 && mode((stored as NSString).deletingLastPathComponent) == 0o700 && mode(dir + "/data/files") == 0o700)
        #expect(kept["mime"] as? String == "image/png")
        let large = try await FilesKit.waitForFile(config: config) { $0["name"] as? String == "holiday.png" && $0["state"] as? String == "stored" }
        #expect(large["sha256"] as? String == (try await FilesKit.sha256(blue)))

        // Where a user looks: the transcript, search filters, a notification with the picture.
        let log = try await FilesKit.roost(["log", "--config", config, pair.bob.description])
        let size = try #require(try FileManager.default.attributesOfItem(atPath: red)[.size] as? Int)
        #expect(log.stdout.contains("[file bob.png \(FileSize.text(Int64(size)))]"), "\(log.stdout)")
        func count(_ query: String) async throws -> Int { try await FilesKit.roost(["search", "--config", config, "--json", query]).jsonLines.count }
        #expect(try await count("has:image") == 2)
        #expect(try await count("filename:bob.png") == 1)
        #expect(try await count("filename:*.png") == 2)
        #expect(try await count("type:image/png") == 2)
        #expect(try await count("filename:*.pdf") == 0)
        #expect(try await count("type:application/pdf") == 0)
        if let notifyLog = ProcessInfo.processInfo.environment["ROOST_TEST_NOTIFY_LOG"] {
            var text = ""
            try? await waitUntil("the file's notification", timeout: .seconds(20), every: .milliseconds(200)) {
                text = (try? String(contentsOfFile: notifyLog, encoding: .utf8)) ?? ""
                return text.contains("sent a picture: bob.png") && text.contains(stored)
            }
            #expect(text.contains("sent a picture: bob.png"), "no file notification; roost log:\n\(roost.stderrSoFar)")
            #expect(text.contains("image-path") && text.contains(stored), "the notification shows the downloaded picture")
        }

        // HTML: pictures inline, copied next to the pages, a thumbnail for the large one; seen in Chromium.
        let site = dir + "/site"
        let html = try await FilesKit.roost(["export", "--config", config, "--format", "html", "-o", site])
        #expect(html.status == 0, "\(html.stderr)")
        let page = site + "/\(pair.bob.description).html"
        let source = try String(contentsOfFile: page, encoding: .utf8)
        #expect(source.contains("src=\"attachments/") && source.contains("_bob.png\""))
        #expect(source.contains("src=\"thumbnails/"), "the 2400×1800 picture is shown through a thumbnail")
        let thumbnails = try FileManager.default.contentsOfDirectory(atPath: site + "/thumbnails")
        #expect(thumbnails.count == 1)
        let shot = dir + "/page.png"
        let chromium = try await FilesKit.run("/usr/bin/chromium", [
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
            "--user-data-dir=\(dir)/chromium", "--window-size=900,1600", "--virtual-time-budget=3000",
            "--screenshot=\(shot)", "file://" + page,
        ], timeout: 90)
        #expect(chromium.status == 0, "\(chromium.output)")
        let redPixels = Int(try await FilesKit.fixture("png_colour_count.py", [shot, "220", "20", "20"])) ?? 0
        let bluePixels = Int(try await FilesKit.fixture("png_colour_count.py", [shot, "20", "40", "220"])) ?? 0
        #expect(redPixels > 20_000, "the picture is drawn on the page (\(redPixels) red pixels)")
        #expect(bluePixels > 20_000, "the thumbnail is drawn on the page (\(bluePixels) blue pixels)")

        // mbox: the picture is a MIME part with the same bytes, as Python's mailbox reads it.
        let mbox = dir + "/chat.mbox"
        #expect(try await FilesKit.roost(["export", "--config", config, "--format", "mbox", "-o", mbox]).status == 0)
        let parts = FilesKit.jsonLines(try await FilesKit.fixture("mbox_attachments.py", [mbox]))
        #expect(parts.contains { $0["filename"] as? String == "bob.png" && $0["sha256"] as? String == kept["sha256"] as? String
                                 && $0["content_type"] as? String == "image/png" })
        let capped = dir + "/capped.mbox"
        #expect(try await FilesKit.roost(["export", "--config", config, "--format", "mbox", "--max-attachment-size", "1K", "-o", capped]).status == 0)
        #expect(FilesKit.jsonLines(try await FilesKit.fixture("mbox_attachments.py", [capped])).isEmpty, "over the cap: linked, not embedded")

        // jsonl → import into another archive → the same files, and the same export again.
        let backup = dir + "/backup.jsonl"
        #expect(try await FilesKit.roost(["export", "--config", config, "--format", "jsonl", "-o", backup]).status == 0)
        let exported = try String(contentsOfFile: backup, encoding: .utf8)
        #expect(exported.contains("\"file\":\"backup.jsonl_files/attachments/"))
        let other = try TestDirectory("roost-files-import")
        let otherConfig = try other.write("config.ini", "[archive]\npath = \(other.path)/archive.sqlite\n")
        let imported = try await FilesKit.roost(["import", "--config", otherConfig, "--json", backup])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.jsonLines.first?["files"] as? Int == 2)
        let restored = try await FilesKit.waitForFile(config: otherConfig, timeout: 5) { $0["name"] as? String == "bob.png" }
        #expect(restored["state"] as? String == "stored" && restored["sha256"] as? String == kept["sha256"] as? String)
        #expect(FileManager.default.contentsEqual(atPath: try #require(restored["path"] as? String), andPath: red))
        let again = dir + "/again.jsonl"
        #expect(try await FilesKit.roost(["export", "--config", otherConfig, "--format", "jsonl", "-o", again]).status == 0)
        let reexported = try String(contentsOfFile: again, encoding: .utf8).replacingOccurrences(of: "again.jsonl_files", with: "backup.jsonl_files")
        #expect(reexported == exported, "export → import → export keeps every byte, files included")
        let verify = try await FilesKit.roost(["verify", "--config", otherConfig, "--files", "--json"])
        #expect(verify.status == 0 && (verify.jsonLines.first?["files"] as? [String: Any])?["intact"] as? Int == 2)
    }

    // MARK: - What is not kept

    /// `<file-sharing/>` (XEP-0447) naming `url` with a SHA-256 that may or may not be the file's.
    private func sharing(_ url: String, name: String, sha256Base64: String) -> String {
        """
        <file-sharing xmlns='urn:xmpp:sfs:0' disposition='attachment'><file xmlns='urn:xmpp:file:metadata:0'>\
        <name>\(name)</name><media-type>text/plain</media-type>\
        <hash xmlns='urn:xmpp:hashes:2' algo='sha-256'>\(sha256Base64)</hash></file>\
        <sources><url-data xmlns='http://jabber.org/protocol/url-data' target='\(url)'/></sources></file-sharing>
        """
    }

    @Test func refusesStrangersOversizedFilesWrongHashesAndBadRedirects() async throws {
        let pair = try await pair()
        let dir = pair.dir.path
        let (carolClient, carol, carolPassword) = try await server.registeredClient("carol")
        await carolClient.disconnect()
        let config = try config(pair, files: "allow_private_addresses = true\nmax_size = 200K")
        let roost = try RoostBinary.start(["run", "--config", config, "-v"])
        defer { roost.stop(signal: SIGKILL) }
        try await roost.ready()
        let target = try pair.alice.with(resource: "roost").description
        let host = try FileHost(root: dir + "/www")

        // A stranger's file is not fetched with download = contacts... until the user asks for it.
        let stranger = dir + "/from-carol.bin"
        try FilesKit.write(stranger, Data((0..<5000).map { UInt8($0 % 251) }))
        try await FilesKit.peer(carol, carolPassword, ["upload", target, stranger])
        _ = try await FilesKit.waitForFile(config: config) { $0["name"] as? String == "from-carol.bin" && $0["state"] as? String == "refused:not-a-contact" }
        try await offPool { try roost.waitForLog("not a contact") }
        let fetched = try await FilesKit.roost(["files", "fetch", "--config", config, "--json", "from:\(carol)"])
        #expect(fetched.status == 0, "\(fetched.stdout)\(fetched.stderr)")
        #expect(fetched.jsonLines.first?["state"] as? String == "stored")
        let carolFile = try await FilesKit.waitForFile(config: config, timeout: 5) { $0["name"] as? String == "from-carol.bin" }
        let strangerHash = try await FilesKit.sha256(stranger)
        #expect(carolFile["state"] as? String == "stored" && carolFile["sha256"] as? String == strangerHash)

        // Over max_size: nothing is written.
        let big = dir + "/big.bin"
        try FilesKit.write(big, Data((0..<300_000).map { UInt8(($0 * 7) % 253) }))
        try await FilesKit.peer(pair.bob, pair.bobPassword, ["upload", target, big])
        _ = try await FilesKit.waitForFile(config: config) { $0["name"] as? String == "big.bin" && $0["state"] as? String == "too-large" }
        let bigHash = try await FilesKit.sha256(big)
        #expect(!FileManager.default.fileExists(atPath: dir + "/data/files/sha256/\(bigHash.prefix(2))/\(bigHash.dropFirst(2))"))
        #expect((try? FileManager.default.contentsOfDirectory(atPath: dir + "/data/files/tmp"))?.isEmpty ?? true, "no partial file is left")

        // A hash that does not match what was advertised: fetched (the request reached the host), not kept.
        try FileManager.default.createDirectory(atPath: dir + "/www", withIntermediateDirectories: true)
        try "the real note\n".write(toFile: dir + "/www/note.txt", atomically: true, encoding: .utf8)
        let noteURL = "http://127.0.0.1:\(host.port)/note.txt"
        let wrongHash = Data(repeating: 7, count: 32).base64EncodedString()
        try await FilesKit.peer(pair.bob, pair.bobPassword, ["send", target, noteURL, "--extra-xml", sharing(noteURL, name: "note.txt", sha256Base64: wrongHash)])
        _ = try await FilesKit.waitForFile(config: config) { $0["name"] as? String == "note.txt" && $0["state"] as? String == "refused:hash-mismatch" }
        #expect(host.requests.contains { $0["path"] as? String == "/note.txt" }, "the download happened")
        let noteHash = try await FilesKit.sha256(dir + "/www/note.txt")
        #expect(!FileManager.default.fileExists(atPath: dir + "/data/files/sha256/\(noteHash.prefix(2))/\(noteHash.dropFirst(2))"))

        // The right hash, reached through a redirect, is kept.
        try "second note\n".write(toFile: dir + "/www/second.txt", atomically: true, encoding: .utf8)
        let secondHash = Data(try #require(Data(hexString: try await FilesKit.sha256(dir + "/www/second.txt")))).base64EncodedString()
        let redirected = "http://127.0.0.1:\(host.port)/to/second.txt"
        try await FilesKit.peer(pair.bob, pair.bobPassword, ["send", target, "see the note", "--extra-xml",
                                                        sharing(redirected, name: "second.txt", sha256Base64: secondHash)])
        let second = try await FilesKit.waitForFile(config: config) { $0["name"] as? String == "second.txt" && $0["state"] as? String != "pending" }
        #expect(second["state"] as? String == "stored", "\(second)")

        // Redirects: an endless chain stops after five, and only http(s) is followed.
        let oob = { (url: String) in "<x xmlns='jabber:x:oob'><url>\(url)</url></x>" }
        try await FilesKit.peer(pair.bob, pair.bobPassword, ["send", target, "loop", "--extra-xml", oob("http://127.0.0.1:\(host.port)/loop/0")])
        _ = try await FilesKit.waitForFile(config: config) { $0["url"] as? String == "http://127.0.0.1:\(host.port)/loop/0" && $0["state"] as? String == "refused:redirects" }
        #expect(host.requests.filter { ($0["path"] as? String)?.hasPrefix("/loop/") == true }.count == 6)
        try await FilesKit.peer(pair.bob, pair.bobPassword, ["send", target, "file", "--extra-xml", oob("http://127.0.0.1:\(host.port)/to-file")])
        _ = try await FilesKit.waitForFile(config: config) { $0["url"] as? String == "http://127.0.0.1:\(host.port)/to-file" && $0["state"] as? String == "refused:scheme" }
        #expect(host.requests.allSatisfy { $0["cookie"] == nil || $0["cookie"] is NSNull }, "no cookies are sent")
    }

    @Test func refusesURLsThatResolveToPrivateAddresses() async throws {
        let pair = try await pair()
        let dir = pair.dir.path
        try FileManager.default.createDirectory(atPath: dir + "/www", withIntermediateDirectories: true)
        try "router admin page\n".write(toFile: dir + "/www/secret.txt", atomically: true, encoding: .utf8)
        // One host on another loopback address (by IP), one reached by a name that resolves to loopback.
        let other = try FileHost(root: dir + "/www", bind: "127.0.0.2")
        let named = try FileHost(root: dir + "/www")
        let config = try config(pair, files: "allow_private_addresses = false\ndownload = all")
        let roost = try RoostBinary.start(["run", "--config", config, "-v"])
        defer { roost.stop(signal: SIGKILL) }
        try await roost.ready()
        let target = try pair.alice.with(resource: "roost").description
        let byAddress = "http://127.0.0.2:\(other.port)/secret.txt", byName = "http://localhost:\(named.port)/secret.txt"
        try await FilesKit.peer(pair.bob, pair.bobPassword, ["send", target, byAddress, byName])
        for url in [byAddress, byName] {
            _ = try await FilesKit.waitForFile(config: config) { $0["url"] as? String == url && $0["state"] as? String == "refused:private-address" }
        }
        try await offPool { try roost.waitForLog("private or local address") }
        #expect(other.requests.isEmpty && named.requests.isEmpty, "no request left Roost")
        // `roost files fetch` does not override the address rule either.
        let fetched = try await FilesKit.roost(["files", "fetch", "--retry-failed", "--config", config, "--json"])
        #expect(fetched.status == 1)
        #expect(fetched.jsonLines.allSatisfy { $0["state"] as? String == "refused:private-address" } && fetched.jsonLines.count == 2)
        #expect(other.requests.isEmpty && named.requests.isEmpty)
    }

    // MARK: - Retries and encrypted media

    @Test func retriesAnInterruptedDownloadAfterARestart() async throws {
        let pair = try await pair()
        let dir = pair.dir.path
        let www = dir + "/www"
        try FileManager.default.createDirectory(atPath: www, withIntermediateDirectories: true)
        let original = www + "/report.pdf"
        try FilesKit.write(original, Data((0..<400_000).map { UInt8(($0 * 13) % 256) }))
        try FilesKit.write(www + "/.truncate", Data())
        let host = try FileHost(root: www)
        let config = try config(pair, files: "allow_private_addresses = true\nretry_seconds = 6")
        var roost = try RoostBinary.start(["run", "--config", config, "-v"])
        defer { roost.stop(signal: SIGKILL) }
        try await roost.ready()
        let url = "http://127.0.0.1:\(host.port)/report.pdf"
        try await FilesKit.peer(pair.bob, pair.bobPassword, ["send", try pair.alice.with(resource: "roost").description, url])
        // The server goes down halfway through: a failure, with a retry scheduled in the archive.
        _ = try await FilesKit.waitForFile(config: config) { $0["url"] as? String == url && $0["state"] as? String == "failed:interrupted" }
        roost.stop(signal: SIGKILL)
        // On a loaded machine the first scheduled retry (6 s later) may have come, and failed, before the kill; and
        // a kill during an attempt leaves a request the archive never counted. So the figures are read after the kill.
        let failed = try await FilesKit.waitForFile(config: config) { $0["url"] as? String == url }
        let failedAttempts = try #require(failed["attempts"] as? Int)
        #expect(failed["state"] as? String == "failed:interrupted" && failed["next_attempt"] is String)
        #expect(failedAttempts >= 1 && host.requests.count >= failedAttempts)
        let requestsBefore = host.requests.count
        // The server is back; Roost starts again and retries when the backoff says so: one more request, which works.
        try FileManager.default.removeItem(atPath: www + "/.truncate")
        roost = try RoostBinary.start(["run", "--config", config, "-v"])
        let kept = try await FilesKit.waitForFile(config: config, timeout: 60) { $0["url"] as? String == url && $0["state"] as? String == "stored" }
        #expect(kept["attempts"] as? Int == failedAttempts + 1)
        #expect(host.requests.count == requestsBefore + 1)
        #expect(kept["sha256"] as? String == (try await FilesKit.sha256(original)))
        #expect(FileManager.default.contentsEqual(atPath: try #require(kept["path"] as? String), andPath: original))
    }

    @Test func decryptsAesgcmLinksAndNeverLogsTheKey() async throws {
        let pair = try await pair()
        let dir = pair.dir.path
        let www = dir + "/www"
        try FileManager.default.createDirectory(atPath: www, withIntermediateDirectories: true)
        let photo = dir + "/photo.png"
        try await FilesKit.fixture("make_png.py", [photo, "300", "200", "10", "200", "10"])
        let fragment = try await FilesKit.fixture("aesgcm_encrypt.py", [photo, www + "/4f2a.png"])
        let tampered = try await FilesKit.fixture("aesgcm_encrypt.py", [photo, www + "/9c1e.png", "--tamper"])
        // Served over https with the test CA's certificate: the account's ca_file is what makes it trusted.
        let host = try FileHost(root: www, tls: true)
        let config = try config(pair, files: "allow_private_addresses = true")
        let roost = try RoostBinary.start(["run", "--config", config, "--log-level", "debug"])
        defer { roost.stop(signal: SIGKILL) }
        try await roost.ready()
        let good = "aesgcm://127.0.0.1:\(host.port)/4f2a.png#\(fragment)"
        let bad = "aesgcm://127.0.0.1:\(host.port)/9c1e.png#\(tampered)"
        try await FilesKit.peer(pair.bob, pair.bobPassword, ["send", try pair.alice.with(resource: "roost").description, good, bad])
        let kept = try await FilesKit.waitForFile(config: config) { $0["url"] as? String == good && $0["state"] as? String == "stored" }
        #expect(kept["sha256"] as? String == (try await FilesKit.sha256(photo)), "the plaintext is kept")
        #expect(FileManager.default.contentsEqual(atPath: try #require(kept["path"] as? String), andPath: photo))
        _ = try await FilesKit.waitForFile(config: config) { $0["url"] as? String == bad && $0["state"] as? String == "failed:decrypt" }
        #expect(host.requests.count == 2)
        let key = String(fragment.suffix(64))
        #expect(!roost.stderrSoFar.contains(key) && !roost.stderrSoFar.contains(String(tampered.suffix(64))), "no key in the log")
        #expect(roost.stderrSoFar.contains("4f2a.png"), "the log names the file")
    }

    /// The file server is trusted as the account trusts its XMPP server: here by a pinned fingerprint (no
    /// ca_file), which accepts the pinned certificate and nothing else.
    @Test func trustsFileServersAsTheAccountTrustsItsServer() async throws {
        let pair = try await pair()
        let dir = pair.dir.path
        let www = dir + "/www"
        try FileManager.default.createDirectory(atPath: www, withIntermediateDirectories: true)
        try "pinned\n".write(toFile: www + "/pinned.txt", atomically: true, encoding: .utf8)
        let certificate = (server.caFile as NSString).deletingLastPathComponent + "/server.crt"
        let fingerprint = try await FilesKit.run("/usr/bin/openssl", ["x509", "-in", certificate, "-noout", "-fingerprint", "-sha256"]).output
            .split(separator: "=").last.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
        #expect(fingerprint.count == 95)
        // A second https server with a certificate of its own, valid for 127.0.0.1 but signed by nobody trusted.
        let strangerCert = dir + "/stranger.crt", strangerKey = dir + "/stranger.key"
        let minted = try await FilesKit.run("/usr/bin/openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                                                           "-keyout", strangerKey, "-out", strangerCert, "-days", "1", "-subj", "/CN=127.0.0.1",
                                                           "-addext", "subjectAltName=IP:127.0.0.1"])
        #expect(minted.status == 0, "\(minted.output)")
        let pinned = try FileHost(root: www, tls: true)
        let stranger = try RoostBinary.startProgram(FilesKit.python, [FilesKit.fixtures + "file_server.py", "--root", www, "--tls", strangerCert, strangerKey])
        defer { stranger.stop(signal: SIGKILL) }
        try await offPool { try stranger.waitForLog("listening") }
        let strangerPort = try #require(FilesKit.jsonLines(stranger.stderrSoFar).first?["port"] as? Int)
        let config = try pair.dir.write("config.ini", """
            [general]
            archive_poll_seconds = 2
            [files]
            allow_private_addresses = true
            retry_seconds = 3600
            [archive]
            path = \(dir)/data/archive.sqlite
            [account \(pair.alice)]
            password = \(pair.alicePassword)
            host = \(server.host)
            port = \(server.port)
            fingerprint = \(fingerprint)
            """)
        let roost = try RoostBinary.start(["run", "--config", config, "-v"])
        defer { roost.stop(signal: SIGKILL) }
        try await roost.ready()
        let good = "https://127.0.0.1:\(pinned.port)/pinned.txt", bad = "https://127.0.0.1:\(strangerPort)/pinned.txt"
        try await FilesKit.peer(pair.bob, pair.bobPassword, ["send", try pair.alice.with(resource: "roost").description, good, bad])
        _ = try await FilesKit.waitForFile(config: config) { $0["url"] as? String == good && $0["state"] as? String == "stored" }
        let refused = try await FilesKit.waitForFile(config: config) { $0["url"] as? String == bad && $0["state"] as? String != "pending" }
        #expect(refused["state"] as? String == "failed:tls", "\(refused)")
        #expect(FilesKit.jsonLines(stranger.stderrSoFar).allSatisfy { $0["event"] as? String != "request" }, "no request reached it")
    }

    // MARK: - Sending

    @Test func sendsFilesThatTheOtherClientDownloads() async throws {
        let pair = try await pair()
        let dir = pair.dir.path
        let config = try config(pair, files: "allow_private_addresses = true")
        let photo = dir + "/sunset.png"
        try await FilesKit.fixture("make_png.py", [photo, "500", "300", "250", "120", "10"])
        let hash = try await FilesKit.sha256(photo)

        /// bob's slixmpp listens (and downloads what it is sent) while `send` runs. It listens far longer than the
        /// wait below and is killed once that ends: on a loaded machine `roost send` alone (a login, an upload)
        /// took most of the 20 s it once listened for.
        func sendAndReceive(_ arguments: [String]) async throws -> (RoostBinary.Result, [[String: Any]]) {
            let listener = try RoostBinary.startProgram(FilesKit.python, [FilesKit.peerScript, "--jid", pair.bob.description,
                                                                          "--password", pair.bobPassword, "listen", "600", "--download"])
            defer { listener.stop(signal: SIGKILL) }
            try await offPool { try listener.waitForLog("\"online\"") }
            let result = try await FilesKit.roost(["send", "--config", config, "--json", pair.bob.description] + arguments)
            if result.status == 0 { try? await waitUntil("bob's client to download the file", timeout: .seconds(90)) { listener.stderrSoFar.contains("\"downloaded\"") } }
            return (result, FilesKit.jsonLines(listener.stderrSoFar))
        }

        // No agent: roost logs in once itself.
        let (oneShot, seen) = try await sendAndReceive(["--file", photo, "a sunset"])
        #expect(oneShot.status == 0, "\(oneShot.stderr)")
        let sent = try #require(oneShot.jsonLines.first)
        #expect(sent["via"] as? String == "one-shot" && sent["sha256"] as? String == hash && sent["mime"] as? String == "image/png")
        let url = try #require(sent["url"] as? String)
        #expect(seen.contains { $0["event"] as? String == "message" && $0["body"] as? String == "a sunset" })
        let fileMessage = try #require(seen.first { $0["event"] as? String == "message" && $0["body"] as? String == url })
        #expect(fileMessage["oob_url"] as? String == url && fileMessage["sfs_name"] as? String == "sunset.png")
        #expect(fileMessage["sfs_sha256"] as? String == Data(try #require(Data(hexString: hash))).base64EncodedString())
        #expect(seen.contains { $0["event"] as? String == "downloaded" && $0["sha256"] as? String == hash }, "bob downloads the same bytes")
        let archived = try await FilesKit.waitForFile(config: config, timeout: 5) { $0["url"] as? String == url }
        #expect(archived["direction"] as? String == "out" && archived["state"] as? String == "stored" && archived["sha256"] as? String == hash)

        // Through the running agent.
        let roost = try RoostBinary.start(["run", "--config", config, "-v"])
        defer { roost.stop(signal: SIGKILL) }
        try await roost.ready()
        let second = dir + "/second.png"
        try await FilesKit.fixture("make_png.py", [second, "120", "90", "1", "2", "3"])
        let (viaAgent, seenAgain) = try await sendAndReceive(["--file", second])
        #expect(viaAgent.status == 0, "\(viaAgent.stderr)")
        #expect(viaAgent.jsonLines.first?["via"] as? String == "agent")
        let secondHash = try await FilesKit.sha256(second)
        #expect(seenAgain.contains { $0["event"] as? String == "downloaded" && $0["sha256"] as? String == secondHash })

        // Clear errors: a file over the server's limit (10 MiB in the test server), a missing file.
        let huge = dir + "/huge.bin"
        try FilesKit.write(huge, Data(count: 11 * 1024 * 1024))
        let tooLarge = try await FilesKit.roost(["send", "--config", config, pair.bob.description, "--file", huge])
        #expect(tooLarge.status == 1 && tooLarge.stderr.contains("accepts files up to"), "\(tooLarge.stderr)")
        let missing = try await FilesKit.roost(["send", "--config", config, pair.bob.description, "--file", dir + "/nope.png"])
        #expect(missing.status == 2 && missing.stderr.contains("No such file"), "\(missing.stderr)")
    }

    /// The systemd unit gives the agent a /tmp of its own (`PrivateTmp=yes`): a file the user names there does not
    /// exist for the agent. `roost send --file` reads the file itself and hands the agent its file-store copy (it
    /// used to hand over the path: "cannot send /tmp/x.png: No such file or directory"). Here the agent runs in a
    /// mount namespace where the folder holding the file is an empty tmpfs, as /tmp is under PrivateTmp.
    @Test func sendsAFileTheAgentCannotSee() async throws {
        try TestRequirement.check(.tool("/usr/bin/unshare"))
        let pair = try await pair()
        let dir = pair.dir.path
        let config = try config(pair, files: "allow_private_addresses = true")
        let hidden = dir + "/private-tmp"
        try FileManager.default.createDirectory(atPath: hidden, withIntermediateDirectories: true)
        let photo = hidden + "/x.png"
        try await FilesKit.fixture("make_png.py", [photo, "200", "100", "9", "99", "199"])
        let hash = try await FilesKit.sha256(photo)
        let roost = try RoostBinary.start(["run", "--config", config, "-v"], wrapper: RoostBinary.hidingFolder(hidden))
        defer { roost.stop(signal: SIGKILL) }
        try await roost.ready()
        #expect(!FileManager.default.fileExists(atPath: "/proc/\(roost.pid)/root\(photo)"), "the agent does not see the file")
        #expect(FileManager.default.fileExists(atPath: "/proc/\(roost.pid)/root\(dir)/config.ini"), "but sees its config")

        let listener = try RoostBinary.startProgram(FilesKit.python, [FilesKit.peerScript, "--jid", pair.bob.description,
                                                                      "--password", pair.bobPassword, "listen", "600", "--download"])
        defer { listener.stop(signal: SIGKILL) }
        try await offPool { try listener.waitForLog("\"online\"") }
        let sent = try await FilesKit.roost(["send", "--config", config, "--json", pair.bob.description, "--file", photo])
        try #require(sent.status == 0, "\(sent.stderr)")
        #expect(sent.jsonLines.first?["via"] as? String == "agent" && sent.jsonLines.first?["name"] as? String == "x.png")
        #expect(sent.jsonLines.first?["sha256"] as? String == hash)
        try await waitUntil("bob downloaded the file", timeout: .seconds(90), detail: { listener.stderrSoFar.suffix(2000).description }) {
            FilesKit.jsonLines(listener.stderrSoFar).contains { $0["event"] as? String == "downloaded" && $0["sha256"] as? String == hash }
        }
        let archived = try await FilesKit.waitForFile(config: config, timeout: 5) { $0["name"] as? String == "x.png" }
        #expect(archived["direction"] as? String == "out" && archived["state"] as? String == "stored" && archived["sha256"] as? String == hash)
    }

    // MARK: - Issue 29: contacts who stall the downloads or fill the disk

    /// alice and her contact bob, carol (a stranger), and a file host serving `files`.
    private func twoSenders(_ files: [String: Data]) async throws -> (Pair, JID, String, FileHost) {
        let pair = try await pair()
        let (carolClient, carol, carolPassword) = try await server.registeredClient("carol")
        await carolClient.disconnect()
        let www = pair.dir.path + "/www"
        try FileManager.default.createDirectory(atPath: www, withIntermediateDirectories: true)
        for (name, data) in files { try FilesKit.write(www + "/" + name, data) }
        return (pair, carol, carolPassword, try FileHost(root: www))
    }

    /// Two links from bob that trickle 2 bytes a second once held both download threads for ever. Now bob has one
    /// transfer at a time (his second waits), carol's file is kept meanwhile, the trickle ends at the minimum rate
    /// ("too-slow"), and after a SIGHUP that lowers max_transfer_seconds a steady but long transfer ends at it.
    @Test func slowSendersCannotHoldTheDownloads() async throws {
        var files = ["fast.bin": Data((0..<20_000).map { UInt8($0 % 241) })]
        for name in ["a.bin", "b.bin", "long.bin"] { files[name] = Data((0..<300_000).map { UInt8($0 % 249) }) }
        let (pair, carol, carolPassword, host) = try await twoSenders(files)
        let settings = "download = all\nallow_private_addresses = true\nretry_seconds = 3600\nmin_rate = 1K"
        let config = try config(pair, files: settings)
        let roost = try RoostBinary.start(["run", "--config", config, "-v"])
        defer { roost.stop(signal: SIGKILL) }
        try await roost.ready()
        let target = try pair.alice.with(resource: "roost").description
        let oob = { (url: String) in "<x xmlns='jabber:x:oob'><url>\(url)</url></x>" }
        let base = "http://127.0.0.1:\(host.port)"
        try await FilesKit.peer(pair.bob, pair.bobPassword, ["send", target, "one", "--extra-xml", oob(base + "/trickle/a.bin?rate=2")])
        try await FilesKit.peer(pair.bob, pair.bobPassword, ["send", target, "two", "--extra-xml", oob(base + "/trickle/b.bin?rate=2")])
        try await waitUntil("bob's first trickle under way", timeout: .seconds(40)) { host.requests.contains { ($0["path"] as? String)?.hasPrefix("/trickle/") == true } }
        try await FilesKit.peer(carol, carolPassword, ["send", target, "three", "--extra-xml", oob(base + "/fast.bin")])
        let fast = try await FilesKit.waitForFile(config: config) { $0["url"] as? String == base + "/fast.bin" && $0["state"] as? String != "pending" }
        #expect(fast["state"] as? String == "stored", "\(fast)")
        // While carol's file came, only one of bob's was fetched and none had ended.
        let trickles = host.requests.filter { ($0["path"] as? String)?.hasPrefix("/trickle/") == true }
        #expect(trickles.count == 1, "bob has one transfer at a time: \(trickles)")
        #expect(host.events.filter { $0["event"] as? String == "done" }.isEmpty, "the trickle still ran: \(host.events)")
        // The trickle ends at the minimum rate (1K over 20 s), and then bob's second starts.
        let slow = try await FilesKit.waitForFile(config: config, timeout: 60) { ($0["url"] as? String)?.contains("/trickle/") == true && $0["state"] as? String != "pending" }
        #expect(slow["state"] as? String == "failed:too-slow", "\(slow)")
        try await offPool { try roost.waitForLog("slower than [files] min_rate") }
        try await waitUntil("bob's second trickle under way", timeout: .seconds(30)) {
            host.requests.filter { ($0["path"] as? String)?.hasPrefix("/trickle/") == true }.count == 2
        }

        // A steady 4 KB/s (above min_rate) for 300 KB: max_transfer_seconds, lowered by SIGHUP, ends it.
        _ = try server.roostConfig(in: pair.dir, account: pair.alice.description, password: pair.alicePassword,
                                   extra: "[files]\n\(settings)\nmax_transfer_seconds = 6\n")
        try await roost.hangUp()
        try await FilesKit.peer(carol, carolPassword, ["send", target, "four", "--extra-xml", oob(base + "/trickle/long.bin?rate=4096")])
        let long = try await FilesKit.waitForFile(config: config, timeout: 60) { ($0["url"] as? String)?.contains("/long.bin") == true && $0["state"] as? String != "pending" }
        #expect(long["state"] as? String == "failed:timeout", "\(long)")
    }

    /// Quotas of the file store: per conversation and in all, and the free-space floor; a link's password never
    /// reaches the log.
    @Test func quotasBoundWhatContactsMayStore() async throws {
        var files: [String: Data] = [:]
        for (index, name) in ["x1.bin", "x2.bin", "y1.bin", "y2.bin", "z.bin"].enumerated() {
            files[name] = Data((0..<200_000).map { UInt8(($0 + index) % 251) })
        }
        let (pair, carol, carolPassword, host) = try await twoSenders(files)
        let settings = "download = all\nallow_private_addresses = true\nretry_seconds = 3600\nquota_per_contact = 300K\nquota = 450K"
        let config = try config(pair, files: settings)
        let roost = try RoostBinary.start(["run", "--config", config, "-v"])
        defer { roost.stop(signal: SIGKILL) }
        try await roost.ready()
        let target = try pair.alice.with(resource: "roost").description
        let base = "http://127.0.0.1:\(host.port)"
        func share(_ jid: JID, _ password: String, _ name: String) async throws -> [String: Any] {
            try await FilesKit.peer(jid, password, ["send", target, name, "--extra-xml", "<x xmlns='jabber:x:oob'><url>\(base)/\(name)</url></x>"])
            return try await FilesKit.waitForFile(config: config) { $0["url"] as? String == base + "/" + name && $0["state"] as? String != "pending" }
        }
        #expect(try await share(pair.bob, pair.bobPassword, "x1.bin")["state"] as? String == "stored")
        #expect(try await share(pair.bob, pair.bobPassword, "x2.bin")["state"] as? String == "refused:quota")
        try await offPool { try roost.waitForLog("reach [files] quota_per_contact (307 kB)") }
        #expect(try await share(carol, carolPassword, "y1.bin")["state"] as? String == "stored")
        #expect(try await share(carol, carolPassword, "y2.bin")["state"] as? String == "refused:quota")
        try await offPool { try roost.waitForLog("the file store holds its [files] quota (461 kB)") }
        // A link with a user name and password: refused (a redirect loop), logged without them.
        try await FilesKit.peer(pair.bob, pair.bobPassword, ["send", target, "loop", "--extra-xml",
                                                             "<x xmlns='jabber:x:oob'><url>http://user:hunter2secret@127.0.0.1:\(host.port)/loop/0</url></x>"])
        try await offPool { try roost.waitForLog("too many redirects") }
        #expect(host.requests.contains { ($0["path"] as? String)?.hasPrefix("/loop/") == true }, "the link was followed")
        #expect(!roost.stderrSoFar.contains("hunter2secret"), "the password reached the log")
        #expect(roost.stderrSoFar.contains("http://127.0.0.1:\(host.port)/loop/"))
        // The free-space floor, raised past any disk by SIGHUP: a failure retried later (space may come back).
        _ = try server.roostConfig(in: pair.dir, account: pair.alice.description, password: pair.alicePassword,
                                   extra: "[files]\ndownload = all\nallow_private_addresses = true\nretry_seconds = 3600\nmin_free = 500000G\n")
        try await roost.hangUp()
        let z = try await share(carol, carolPassword, "z.bin")
        #expect(z["state"] as? String == "failed:disk-space" && z["next_attempt"] is String, "\(z)")
        #expect(!host.requests.contains { $0["path"] as? String == "/z.bin" }, "nothing was fetched")
    }
}

extension Data {
    /// Bytes from lowercase or uppercase hex digits.
    init?(hexString: String) {
        guard let bytes = Hex.bytes(hexString) else { return nil }
        self.init(bytes)
    }
}
