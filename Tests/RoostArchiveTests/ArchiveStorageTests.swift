import Foundation
import Testing
@testable import RoostArchive

@Suite struct ArchiveStorageTests {
    @Test func createsFileAndFolderWithPrivateModes() throws {
        let archive = TemporaryArchive()
        _ = try archive.writer()
        var info = stat()
        #expect(stat(archive.path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        #expect(stat(archive.folder + "/data", &info) == 0)
        #expect(info.st_mode & 0o777 == 0o700)
        #expect(stat(archive.folder, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o700)
    }

    @Test func migrationsAreRecordedOnceAndIdempotent() throws {
        let archive = TemporaryArchive()
        do { _ = try archive.writer() }
        do { _ = try archive.writer() }
        let database = try Database(path: archive.path, mode: .readOnly)
        #expect(try Migrator.currentVersion(database) == Migrator.latestVersion)
        #expect(try database.prepare("SELECT count(*) FROM schema_migrations").scalarInt() == Int64(Migrator.migrations.count))
        var mode = ""
        try database.prepare("PRAGMA journal_mode").forEachRow { row in
            mode = row.text(0)
            return false
        }
        #expect(mode == "wal")
    }

    @Test func writerUsesFullSynchronousAndForeignKeys() throws {
        let archive = TemporaryArchive()
        _ = try archive.writer()
        let database = try Database(path: archive.path, mode: .readWrite, synchronous: .full)
        #expect(try database.prepare("PRAGMA synchronous").scalarInt() == 2)
        #expect(try database.prepare("PRAGMA foreign_keys").scalarInt() == 1)
    }

    @Test func readerRefusesMissingArchive() throws {
        let archive = TemporaryArchive()
        #expect(throws: ArchiveError.self) { try archive.reader() }
        do {
            _ = try archive.reader()
        } catch let error as ArchiveError {
            guard case .notAnArchive = error else { Issue.record("unexpected \(error)"); return }
            #expect(error.description.contains("roost run"))
        }
    }

    @Test func sqliteErrorCarriesSQLButNotValues() throws {
        let archive = TemporaryArchive()
        _ = try archive.writer()
        let database = try Database(path: archive.path, mode: .readWrite)
        do {
            try database.run("INSERT INTO accounts (id, jid, created_at) VALUES (?, ?, ?)", [.integer(1), .text("secret-value"), .null])
            Issue.record("NOT NULL constraint should fail")
        } catch {
            #expect(error.sql?.contains("INSERT INTO accounts") == true)
            #expect(!error.description.contains("secret-value"))
            #expect(error.primaryCode == 19)
        }
    }

    @Test func syncStateRoundTrip() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        _ = try writer.commitBlocking([.syncState(SyncStateRecord(account: Fixture.account, lastStanzaId: "s1", streamManagementId: "sm", streamManagementH: 7))])
        _ = try writer.commitBlocking([.syncState(SyncStateRecord(account: Fixture.account, lastTimestamp: 42))])
        var state = try #require(try writer.syncState(account: Fixture.account))
        #expect(state.lastStanzaId == "s1")
        #expect(state.lastTimestamp == 42)
        #expect(state.streamManagementId == "sm")
        #expect(state.streamManagementH == 7)
        _ = try writer.commitBlocking([.syncState(SyncStateRecord(account: Fixture.account, clearStreamManagement: true))])
        state = try #require(try writer.syncState(account: Fixture.account))
        #expect(state.streamManagementId == nil)
        #expect(state.lastStanzaId == "s1")
    }

    @Test func rosterSubscriptionsAndPresenceAreStored() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        let t = Fixture.baseTime
        let outcomes = try writer.commitBlocking([
            .rosterItem(RosterItemRecord(account: Fixture.account, jid: Fixture.peer, name: "Peer", groups: ["Friends"], subscription: "both", timestamp: t)),
            .vCard(VCardRecord(account: Fixture.account, jid: Fixture.peer, nickname: "P", fetchedAt: t)),
            .subscription(SubscriptionRecord(account: Fixture.account, jid: "new@example.com", direction: .incoming, kind: .subscribe, message: "hi", timestamp: t)),
            .subscription(SubscriptionRecord(account: Fixture.account, jid: "new@example.com", direction: .outgoing, kind: .subscribed, timestamp: t + 1)),
            .presence(PresenceRecord(account: Fixture.account, contact: Fixture.peer, resource: "phone", availability: .available, show: "away", status: "out", priority: 5, timestamp: t)),
            .rosterRemoval(account: Fixture.account, jid: Fixture.peer, timestamp: t + 2),
        ])
        #expect(outcomes.allSatisfy { $0 == .stored })
        let database = try Database(path: archive.path, mode: .readOnly)
        var status = ""
        try database.prepare("SELECT status FROM subscription_requests WHERE kind = 'subscribe'").forEachRow { row in
            status = row.text(0)
            return false
        }
        #expect(status == "accepted")
        #expect(try database.prepare("SELECT in_roster FROM contacts WHERE jid = 'peer@example.com'").scalarInt() == 0)
        #expect(try database.prepare("SELECT count(*) FROM contacts WHERE nickname = 'P' AND groups = '[\"Friends\"]'").scalarInt() == 1)
        let stats = try archive.reader().stats()
        #expect(stats.presenceEvents == 1)
        #expect(stats.subscriptionEvents == 2)
    }

    @Test func invalidRecordRejectsWholeBatch() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        var bad = Fixture.message("x")
        bad.account = ""
        #expect(throws: ArchiveError.self) { try writer.commitBlocking([.message(Fixture.message("ok")), .message(bad)]) }
        #expect(try archive.reader().search(query: "").isEmpty)
    }
}
