import Foundation
import Testing
import RoostCore
import RoostArchive
import RoostXMPP
@testable import RoostAgent

private func message(_ s: String) -> Message {
    let parser = XMLStreamParser()
    let events = try! parser.feed(Array("<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' version='1.0'>\(s)".utf8))
    for case .stanza(let e) in events { return Message(e) }
    fatalError("no stanza")
}

@Suite("Files: address guard, shared-file extraction, aesgcm links, config")
struct FilesPolicyTests {
    private func bytes(_ text: String) -> [UInt8] { AddressGuard.bytes(of: text)! }

    @Test func onlyPublicAddressesArePublic() {
        for address in ["0.0.0.0", "10.1.2.3", "100.64.0.1", "127.0.0.1", "127.0.0.2", "169.254.169.254", "172.16.0.1", "172.31.255.255",
                        "192.168.1.1", "192.0.2.1", "198.18.0.1", "224.0.0.1", "239.255.255.250", "255.255.255.255",
                        "::", "::1", "fe80::1", "fc00::1", "fd12:3456::1", "ff02::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1",
                        "64:ff9b::a00:1", "2002:c0a8:101::1", "2001:db8::1", "::127.0.0.1", "fec0::1"] {
            #expect(!AddressGuard.isPublic(bytes(address)), "\(address) is not public")
        }
        for address in ["93.184.216.34", "8.8.8.8", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "::ffff:8.8.8.8",
                        "64:ff9b::808:808", "2002:808:808::1"] {
            #expect(AddressGuard.isPublic(bytes(address)), "\(address) is public")
        }
    }

    /// `stop` is resumed by the last download thread to end (no polling): also when two stops race and when it is
    /// called again afterwards.
    /// A worker on an empty archive of its own (removed by `defer`ring `cleanUp`).
    func makeWorker(threads: Int) throws -> (FileDownloadWorker, cleanUp: () -> Void) {
        let folder = "/tmp/roost-files-\(UUID().uuidString.prefix(8))"
        let worker = try FileDownloadWorker(writer: try ArchiveWriter(path: folder + "/archive.sqlite"), settings: FilesSettings(),
                                            accounts: [], log: Logger(level: .error, sink: { _ in }), threads: threads)
        return (worker, { try? FileManager.default.removeItem(atPath: folder) })
    }

    @Test func stopReturnsOnceTheDownloadThreadsHaveEnded() async throws {
        let (worker, cleanUp) = try makeWorker(threads: 3)
        defer { cleanUp() }
        worker.start()
        async let first: Void = worker.stop()
        async let second: Void = worker.stop()
        _ = await (first, second)
        await worker.stop()
    }

    /// An idle download thread waits for a wake-up, no timer: each `fetch` wakes it, and its answer (here: no such
    /// row) comes back to the caller.
    @Test func idleThreadsWakeForEachFetch() async throws {
        let (worker, cleanUp) = try makeWorker(threads: 1)
        defer { cleanUp() }
        worker.start()
        // Generous for a loaded machine, whose cooperative pool the whole suite shares: without a wake-up the answer
        // never comes.
        for id in Int64(1)...5 {
            let answer = await Deadline.race(seconds: 60, timedOut: [Int64: AttachmentState?]?.none) { once in
                Task { once.fulfil(await worker.fetch([id])) }
            }
            let result = try #require(answer, "fetch \(id) was not answered within 60 s")
            #expect(result.count == 1 && result[id] == .some(nil))
        }
        await worker.stop()
        #expect(await worker.fetch([9]) == [9: nil])
    }

    @Test func namesThatResolveToLoopbackAreRefused() {
        guard case .privateOnly = AddressGuard.resolve(host: "localhost", port: 80, allowPrivate: false) else {
            Issue.record("localhost must resolve to private addresses only")
            return
        }
        guard case .addresses(let found) = AddressGuard.resolve(host: "127.0.0.1", port: 80, allowPrivate: true) else {
            Issue.record("allowed when private addresses are allowed")
            return
        }
        #expect(found.map(\.text) == ["127.0.0.1"])
        guard case .privateOnly = AddressGuard.resolve(host: "[::1]", port: 80, allowPrivate: false) else {
            Issue.record("an IPv6 literal is checked too")
            return
        }
    }

    @Test func sharedFilesFromEverySource() {
        let records = SharedFiles.attachments(in: message("""
            <message from='bob@roost.test/phone'><body>https://up.example/k/photo.jpg</body>\
            <x xmlns='jabber:x:oob'><url>https://up.example/k/photo.jpg</url></x>\
            <file-sharing xmlns='urn:xmpp:sfs:0'><file xmlns='urn:xmpp:file:metadata:0'><name>report.pdf</name>\
            <media-type>application/pdf</media-type><size>1234</size>\
            <hash xmlns='urn:xmpp:hashes:2' algo='sha-256'>AAAA</hash></file>\
            <sources><url-data xmlns='http://jabber.org/protocol/url-data' target='ftp://old.example/report.pdf'/>\
            <url-data xmlns='http://jabber.org/protocol/url-data' target='https://up.example/r/report.pdf'/></sources>\
            </file-sharing></message>
            """))
        #expect(records.map(\.url) == ["https://up.example/r/report.pdf", "https://up.example/k/photo.jpg"], "each URL once, http(s) sources only")
        #expect(records[0].name == "report.pdf" && records[0].mime == "application/pdf" && records[0].size == 1234)
        #expect(records[0].hashes == [FileHash(algorithm: "sha-256", base64: "AAAA")] && records[0].state == .pending)
        #expect(records[1].name == "photo.jpg")
    }

    @Test func anEncryptedMessagesFileIsTheLinkInItsDecryptedBodyOnly() throws {
        var context = RoutingContext(account: try JID("alice@roost.test"), trustsOwnStanzaIDs: true, displayNames: [:])
        let link = "aesgcm://up.example/s/photo.jpg#" + String(repeating: "0a", count: 44)
        context.decryptor = { _ in .decrypted(body: link, MessageEncryption(protocolNamespace: "eu.siacs.conversations.axolotl")) }
        // A plaintext link beside the encrypted payload (added by anyone on the way) is not taken.
        let outcome = StanzaRouter.route(message: message("""
            <message from='bob@roost.test/phone' to='alice@roost.test/roost' type='chat' id='e1'>            <encrypted xmlns='eu.siacs.conversations.axolotl'><header sid='1'/></encrypted>            <x xmlns='jabber:x:oob'><url>https://evil.example/tracker.png</url></x></message>
            """), context: context, now: 0)
        let record = try #require(outcome.events.compactMap { if case .message(let m) = $0 { m } else { nil } }.first)
        #expect(record.body == link && record.attachments.map(\.url) == [link])
        #expect(record.attachments.first?.name == "photo.jpg")
    }

    @Test func aBodyIsAnUploadLinkOnlyWhenItIsOneFileURL() {
        #expect(SharedFiles.uploadLink("https://up.example/x/y/cat%20pic.png") == "https://up.example/x/y/cat%20pic.png")
        #expect(SharedFiles.uploadLink("  aesgcm://up.example/x/clip.mp4#00ff  ") == "aesgcm://up.example/x/clip.mp4#00ff")
        #expect(SharedFiles.uploadLink("look https://up.example/x/cat.png") == nil, "text around a link")
        #expect(SharedFiles.uploadLink("https://news.example/story.html") == nil, "a page")
        #expect(SharedFiles.uploadLink("https://example.org/") == nil, "no file name")
        #expect(SharedFiles.uploadLink("ftp://up.example/cat.png") == nil)
        #expect(SharedFiles.uploadLink("file:///etc/passwd") == nil)
        let plain = SharedFiles.attachments(in: message("<message><body>https://up.example/a/b.png</body></message>"))
        #expect(plain.map(\.url) == ["https://up.example/a/b.png"] && plain.first?.name == "b.png")
    }

    @Test func aesgcmLinks() throws {
        let iv = String(repeating: "01", count: 12), key = String(repeating: "ab", count: 32)
        let link = try #require(AESGCMFile.parse("aesgcm://up.example/a/b.jpg#\(iv)\(key)"))
        #expect(link.https == "https://up.example/a/b.jpg" && link.iv.count == 12 && link.key == [UInt8](repeating: 0xab, count: 32))
        let legacy = try #require(AESGCMFile.parse("aesgcm://up.example/a/b.jpg#\(String(repeating: "01", count: 16))\(key)"))
        #expect(legacy.iv.count == 16)
        #expect(AESGCMFile.parse("aesgcm://up.example/a/b.jpg#\(key)") == nil)
        #expect(AESGCMFile.parse("aesgcm://up.example/a/b.jpg#\(iv)\(key.dropLast(2))zz") == nil)
        #expect(FileFetcher.loggable("aesgcm://up.example/a/b.jpg#\(iv)\(key)") == "aesgcm://up.example/a/b.jpg")
        #expect(FileFetcher.loggable("https://up.example/a?token=secret") == "https://up.example/a")
        #expect(FileFetcher.loggable("http://user:hunter2@up.example/a") == "http://up.example/a")
        #expect(FileFetcher.loggable("https://a:b@c@up.example:8443/x@y?z") == "https://up.example:8443/x@y")
    }

    @Test func sealedFilesOpenWithTheirFragmentOnly() throws {
        let folder = NSTemporaryDirectory() + "roost-aesgcm-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let plain = Data((0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try plain.write(to: URL(fileURLWithPath: folder + "/plain"))
        let fragment = try AESGCMFile.seal(folder + "/plain", into: folder + "/sealed")
        let sealed = try Data(contentsOf: URL(fileURLWithPath: folder + "/sealed"))
        #expect(sealed.count == plain.count + 16 && sealed.prefix(1000) != plain.prefix(1000))
        func open(_ bytes: Data, fragment: String) throws -> Data? {
            let link = try #require(AESGCMFile.parse("aesgcm://up.example/f.bin#\(fragment)"))
            let cipher = try #require(AESGCMFile(key: link.key, iv: link.iv))
            var out: [UInt8] = []
            // Fed in uneven pieces, as a network delivers them.
            var offset = 0
            while offset < bytes.count {
                let piece = bytes[offset..<min(offset + 65_521, bytes.count)]
                piece.withUnsafeBytes { cipher.update($0) { out += $0 } }
                offset += piece.count
            }
            return cipher.finish { out += $0 } ? Data(out) : nil
        }
        #expect(try open(sealed, fragment: fragment) == plain)
        var tampered = sealed
        tampered[1234] ^= 1
        #expect(try open(tampered, fragment: fragment) == nil, "a changed byte fails the tag")
        #expect(try open(sealed.dropLast(), fragment: fragment) == nil, "a truncated file fails the tag")
        #expect(try AESGCMFile.seal(folder + "/plain", into: folder + "/sealed2") != fragment, "a fresh key each time")
    }

    @Test func filesConfig() throws {
        let dir = try ConfigSandbox()
        let config = try dir.load("""
            [files]
            download = all
            max_size = 20M
            allow_private_addresses = yes
            retry_seconds = 30
            max_transfer_seconds = 600
            min_rate = 4K
            quota = 0
            quota_per_contact = 500M
            min_free = 2G
            """)
        #expect(config.files.maxTransferSeconds == 600 && config.files.minRate == 4096 && config.files.quota == 0)
        #expect(config.files.quotaPerContact == 500 << 20 && config.files.minFree == 2 << 30)
        #expect(config.files.download == .all && config.files.maxSize == 20 << 20)
        #expect(config.files.allowPrivateAddresses && config.files.retrySeconds == 30)
        #expect(try dir.load("").files == FilesSettings())
        #expect(FilesSettings().download == .contacts && FilesSettings().maxSize == 100 << 20 && !FilesSettings().allowPrivateAddresses)
        let problems = dir.problems("""
            [files]
            download = friends
            max_size = lots
            colour = blue
            max_transfer_seconds = 1
            quota = plenty
            """).map(\.description)
        #expect(problems.contains { $0.contains("max_transfer_seconds") })
        #expect(problems.contains { $0.contains("quota") && $0.contains("100M") })
        #expect(problems.contains { $0.contains("download") && $0.contains("contacts, all, none") })
        #expect(problems.contains { $0.contains("max_size") && $0.contains("100M") })
        #expect(problems.contains { $0.contains("colour") })
    }

    @Test func sizesPeopleWrite() {
        #expect(FileSize.parse("100M") == 104_857_600 && FileSize.parse("1.5 GiB") == 1_610_612_736)
        #expect(FileSize.parse("500000") == 500_000 && FileSize.parse("2MB") == 2_000_000 && FileSize.parse("10k") == 10_240)
        #expect(FileSize.parse("") == nil && FileSize.parse("12 parsecs") == nil && FileSize.parse("0") == nil)
        #expect(FileSize.text(999) == "999 bytes" && FileSize.text(1_234_567) == "1.2 MB" && FileSize.text(34_000_000) == "34 MB")
        #expect(FileSize.text(1_000) == "1 kB")
    }
}
