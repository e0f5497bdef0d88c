import Testing
import RoostArchive

@Suite struct ArchiveDedupTests {
    @Test func trustedStanzaIdTwiceIsStoredOnce() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        let first = try writer.commitBlocking([.message(Fixture.message("hello", stanzaId: "S1"))])
        let second = try writer.commitBlocking([.message(Fixture.message("hello", at: 5_000, stanzaId: "S1", source: .mam))])
        guard case .inserted(let id) = first[0] else { Issue.record("not inserted: \(first)"); return }
        #expect(second == [.duplicate(existingId: id)])
        #expect(try archive.reader().search(query: "").count == 1)
    }

    @Test func duplicateInsideOneBatchIsReportedNotThrown() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        let outcomes = try writer.commitBlocking([.message(Fixture.message("a", stanzaId: "S1")), .message(Fixture.message("a", stanzaId: "S1"))])
        guard case .inserted(let id) = outcomes[0] else { Issue.record("\(outcomes)"); return }
        #expect(outcomes[1] == .duplicate(existingId: id))
    }

    @Test func carbonAndLiveCopyWithOriginIdAreStoredOnce() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        var carbon = Fixture.message("sent from my phone", direction: .outgoing, from: Fixture.account + "/phone", originId: "O1", messageId: "m1", source: .carbon)
        carbon.isCarbon = true
        let live = Fixture.message("sent from my phone", at: 20, direction: .outgoing, from: Fixture.account + "/phone", originId: "O1", messageId: "m1")
        let outcomes = try writer.commitBlocking([.message(carbon), .message(live)])
        #expect(outcomes.count == 2)
        if case .duplicate = outcomes[1] {} else { Issue.record("live copy stored twice: \(outcomes)") }
        #expect(try archive.reader().search(query: "phone").count == 1)
    }

    @Test func untrustedCopyAdoptsTrustedStanzaIdLater() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        let live = Fixture.message("catch me", originId: "O2")
        let mam = Fixture.message("catch me", at: 1_000, stanzaId: "S9", originId: "O2", source: .mam)
        let first = try writer.commitBlocking([.message(live)])
        let second = try writer.commitBlocking([.message(mam)])
        guard case .inserted(let id) = first[0] else { Issue.record("\(first)"); return }
        #expect(second == [.duplicate(existingId: id)])
        // Now the trusted id is known: a third copy is recognised by stanza-id alone.
        let third = try writer.commitBlocking([.message(Fixture.message("catch me", at: 2_000, stanzaId: "S9", source: .mam))])
        #expect(third == [.duplicate(existingId: id)])
        let rows = try archive.reader().search(query: "catch")
        #expect(rows.count == 1)
        #expect(rows.first?.stanzaId == "S9")
    }

    @Test func differentTrustedIdsAreDifferentMessagesEvenWithSameFallbackKey() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        let outcomes = try writer.commitBlocking([
            .message(Fixture.message("ok", stanzaId: "A", messageId: "1")),
            .message(Fixture.message("ok", stanzaId: "B", messageId: "1")),
        ])
        #expect(outcomes.allSatisfy { if case .inserted = $0 { true } else { false } })
    }

    @Test func untrustedStanzaIdIsNotUsedForDedup() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        // A forged stanza-id (by someone else) must not let a different message be swallowed.
        let outcomes = try writer.commitBlocking([
            .message(Fixture.message("first", stanzaId: "X", trusted: false, messageId: "a")),
            .message(Fixture.message("second", stanzaId: "X", trusted: false, messageId: "b")),
        ])
        #expect(outcomes.allSatisfy { if case .inserted = $0 { true } else { false } })
    }

    @Test func messageIdAndBodyHashFallback() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        let outcomes = try writer.commitBlocking([
            .message(Fixture.message("same", messageId: "m7")),
            .message(Fixture.message("same", at: 3_000, messageId: "m7")),
            .message(Fixture.message("different body", messageId: "m7")),
        ])
        #expect(outcomes.count == 3)
        if case .duplicate = outcomes[1] {} else { Issue.record("\(outcomes)") }
        if case .inserted = outcomes[2] {} else { Issue.record("\(outcomes)") }
    }

    @Test func timestampFallbackUsesWholeSeconds() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        let outcomes = try writer.commitBlocking([
            .message(Fixture.message("no ids at all", at: 100)),
            .message(Fixture.message("no ids at all", at: 900)),
            .message(Fixture.message("no ids at all", at: 1_100)),
        ])
        if case .duplicate = outcomes[1] {} else { Issue.record("\(outcomes)") }
        if case .inserted = outcomes[2] {} else { Issue.record("\(outcomes)") }
    }

    @Test func groupchatOriginIdIsPerSender() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        let room = "room@muc.example.com"
        let outcomes = try writer.commitBlocking([
            .message(Fixture.message("mine", conversation: room, from: room + "/alice", kind: .groupchat, originId: "same")),
            .message(Fixture.message("spoof", conversation: room, from: room + "/mallory", kind: .groupchat, originId: "same")),
        ])
        #expect(outcomes.allSatisfy { if case .inserted = $0 { true } else { false } })
    }

    @Test func repeatedChatStateIsDuplicate() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        let state = ChatStateRecord(account: Fixture.account, conversation: Fixture.peer, from: Fixture.peer + "/phone", state: .composing, timestamp: Fixture.baseTime)
        #expect(try writer.commitBlocking([.chatState(state), .chatState(state)]) == [.stored, .duplicate(existingId: nil)])
    }
}
