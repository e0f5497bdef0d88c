import Foundation
import Testing
import RoostTestSupport

/// What each client keeps, as found by running it (docs/import.md lists it per client).
extension RealClient {
    /// The room's history sent at join (what was said before the client came): Profanity shows it, does not log it.
    var keepsRoomHistory: Bool { name != "profanity" }
    /// A private message sent with the room window's `/msg NICK TEXT`: libpurple sends it without a conversation, so
    /// Finch logs nothing of it.
    var keepsSentPrivateMessages: Bool { name != "finch" }
    /// Downloads a shared picture into its own folder (Gajim's previews, `downloads/`), which an import copies.
    var keepsDownloads: Bool { name == "gajim" }
}

extension Scenario {
    // MARK: 1. Roost archived each message once

    func checkLiveArchive() throws {
        let rows = try ArchivedRow.read(archive)
        for index in said.indices {
            let matches = rows.filter { $0.matches(said[index]) }
            // A private message in a room reaches the user's every session under the nick (Roost's and the client's),
            // each copy with a stanza-id of its own: archived once all the same (issue 28).
            #expect(matches.count == 1, "\(client.name): \(said[index]) archived \(matches.count) times; rows:\n\(rows.map(\.description).joined(separator: "\n"))")
            if let row = matches.first { said[index].timestamp = row.timestamp }
            if said[index].encrypted { #expect(matches.first?.undecryptable == false, "\(client.name): Roost could not read \(said[index])") }
            if said[index].file { #expect(matches.first?.files == 1, "\(client.name): \(said[index]) without its file") }
        }
        let extra = rows.filter { row in !said.contains { row.matches($0) } }
        #expect(extra.isEmpty, "\(client.name): rows nobody said:\n\(extra.map(\.description).joined(separator: "\n"))")
        #expect(rows.count == said.count, "\(client.name): \(rows.count) rows for \(said.count) messages")
    }

    // MARK: 2. and 3. The client's own history, imported

    /// The rows an import of this client's history must give: what the client saw, a correction as one edited message
    /// where the client keeps corrections (else its two texts as two messages), an encrypted message as undecryptable.
    var expectedImport: [ExpectedRow] {
        var rows: [ExpectedRow] = []
        for message in said where (!message.beforeJoin || client.keepsRoomHistory)
            && !(message.conversation.contains("/") && message.direction == "out" && !client.keepsSentPrivateMessages) {
            var row = ExpectedRow(conversation: message.conversation, kind: message.kind, direction: message.direction, nick: message.nick,
                                  body: message.encrypted ? nil : message.body, first: nil, timestamp: message.timestamp)
            if let first = message.first {
                if client.abilities.contains(.keepsCorrections) {
                    row.first = first
                } else {
                    var original = row
                    original.body = first
                    rows.append(original)
                }
            }
            rows.append(row)
        }
        return rows
    }

    /// `roost import --json` of the client's history into the archive of `config`, in time zone `zone`.
    func runImport(config: String, zone: String) throws -> [String: Any] {
        let result = try RoostBinary.run(["import", "--config", config, "--json"] + client.importArguments + [client.historyPath],
                                         environment: ["TZ": zone], timeout: 120)
        #expect(result.status == 0, "\(client.name): roost import in \(zone) exited \(result.status): \(result.stderr)")
        return result.jsonLines.last ?? [:]
    }

    func checkImports() throws {
        let expected = expectedImport
        var byZone: [String: [String]] = [:]
        for zone in Self.importZones {
            // A fresh archive.
            let fresh = try TestDirectory("roost-import")
            let config = try fresh.write("config.ini", "[archive]\npath = \(fresh.path)/archive.sqlite\n")
            let summary = try runImport(config: config, zone: zone)
            let rows = try ArchivedRow.read(fresh.path + "/archive.sqlite")
            for row in expected {
                let found = rows.filter { row.matches($0, tolerance: Self.timeTolerance) }
                #expect(found.count == 1, "\(client.name), import in \(zone): \(row) found \(found.count) times; imported:\n\(rows.map(\.description).joined(separator: "\n"))\nreport: \(summary)")
            }
            let extra = rows.filter { row in !expected.contains { $0.matches(row, tolerance: Self.timeTolerance) } }
            #expect(extra.isEmpty, "\(client.name), import in \(zone): rows nobody said:\n\(extra.map(\.description).joined(separator: "\n"))\nreport: \(summary)")
            #expect(rows.allSatisfy { $0.body.map { !Self.placeholders.contains($0) } ?? true },
                    "\(client.name), import in \(zone): a placeholder imported as text")
            // The picture bob shared, as the client downloaded it, is in Roost's file store now.
            #expect(summary["files"] as? Int == (client.keepsDownloads ? 1 : 0), "\(client.name), import in \(zone): \(summary)")
            #expect(summary["unread"] as? Int == 0 && summary["paths_refused"] as? Int == 0, "\(client.name), import in \(zone): \(summary)")
            byZone[zone] = rows.map(\.description)

            // The live archive (a copy): everything is there already.
            let live = try TestDirectory("roost-import-live")
            try FileManager.default.copyItem(atPath: archive, toPath: live.path + "/archive.sqlite")
            let liveConfig = try live.write("config.ini", "[archive]\npath = \(live.path)/archive.sqlite\n")
            let before = try ArchivedRow.read(live.path + "/archive.sqlite")
            let again = try runImport(config: liveConfig, zone: zone)
            let after = try ArchivedRow.read(live.path + "/archive.sqlite")
            #expect(again["added"] as? Int == 0 && again["corrections"] as? Int == 0,
                    "\(client.name), import into the live archive in \(zone) added something: \(again)")
            #expect(after.map(\.description) == before.map(\.description),
                    "\(client.name), import into the live archive in \(zone) changed it:\n\(Set(after.map(\.description)).symmetricDifference(before.map(\.description)).sorted().joined(separator: "\n"))")
        }
        let zones = Array(byZone.values)
        #expect(zones.allSatisfy { $0 == zones[0] }, "\(client.name): the imports differ between time zones: \(byZone)")
    }

    /// Texts a client keeps for a message it could not decrypt, and the fallback bodies it kept from senders.
    static let placeholders: Set<String> = [
        "This message is OMEMO encrypted.",
        "You received a message encrypted with OMEMO but your client doesn't support OMEMO.",
        "This message was encrypted with OMEMO, but not for your device.",
    ]

    // MARK: Fixtures for the importer unit tests

    /// With ROOST_CLIENT_FIXTURES_OUT set: the client's history (what `roost import` reads, nothing secret) and a manifest.
    func keepFixture() throws {
        guard let out = ProcessInfo.processInfo.environment["ROOST_CLIENT_FIXTURES_OUT"], !out.isEmpty else { return }
        let folder = out + "/" + client.name
        try? FileManager.default.removeItem(atPath: folder)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let home = client.machine.home
        let kept: [String] = switch client.name {
        case "profanity": [".local/share/profanity/database", ".local/share/profanity/chatlogs"]
        case "finch": [".purple/logs"]
        case "poezio": [".local/share/poezio/logs"]
        default: [".local/share/gajim/downloads"]
        }
        for relative in kept where FileManager.default.fileExists(atPath: home + "/" + relative) {
            try FileManager.default.createDirectory(atPath: (folder + "/" + relative as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: home + "/" + relative, toPath: folder + "/" + relative)
        }
        if client.name == "gajim" {
            // One file, without its write-ahead log: SQLite's backup of the database Gajim left.
            let backup = try RoostBinary.runProgram("/usr/bin/sqlite3", [home + "/.local/share/gajim/logs.db",
                                                                         ".backup '\(folder)/.local/share/gajim/logs.db'"])
            #expect(backup.status == 0, "\(backup.stderr)")
        }
        if client.name == "poezio" {
            // The account poezio logs for: its config without the password.
            try FileManager.default.createDirectory(atPath: folder + "/.config/poezio", withIntermediateDirectories: true)
            try "[Poezio]\njid = \(alice.jid)\n".write(toFile: folder + "/.config/poezio/poezio.cfg", atomically: true, encoding: .utf8)
        }
        let manifest = ClientFixtureManifest(
            client: client.name, version: client.version, timeZone: client.machine.timeZone, account: alice.jid.description, room: room,
            path: String(client.historyPath.dropFirst(home.count + 1)), importArguments: client.importArguments, said: said,
            expected: expectedImport, tolerance: Self.timeTolerance,
            generated: "contrib/scripts/make-client-fixtures (Tests/RoostClientTests, the real-client tier)")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try encoder.encode(manifest).write(to: URL(fileURLWithPath: folder + "/manifest.json"))
    }
}
