import Testing
import RoostArchive

@Suite struct ArchiveTranscriptTests {
    @Test func transcriptInterleavesStatesAndPresence() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        let t = Fixture.baseTime
        _ = try writer.commitBlocking([
            .presence(PresenceRecord(account: Fixture.account, contact: Fixture.peer, resource: "phone", availability: .available, timestamp: t)),
            .chatState(ChatStateRecord(account: Fixture.account, conversation: Fixture.peer, from: Fixture.peer + "/phone", state: .composing, timestamp: t + 10)),
            .message(Fixture.message("hi", at: 20, messageId: "1")),
            .chatState(ChatStateRecord(account: Fixture.account, conversation: Fixture.peer, from: Fixture.peer + "/phone", state: .active, timestamp: t + 20)),
            .message(Fixture.message("hello back", at: 30, direction: .outgoing, messageId: "2")),
            .presence(PresenceRecord(account: Fixture.account, contact: Fixture.peer, resource: "phone", availability: .unavailable, timestamp: t + 40)),
            .message(Fixture.message("elsewhere", at: 25, conversation: "x@example.com", messageId: "3")),
        ])
        let reader = try archive.reader()
        var kinds: [String] = []
        try reader.transcript(conversation: Fixture.peer, includeStates: true, includePresence: true) { event in
            switch event {
            case .message(let row): kinds.append("m:" + (row.body ?? ""))
            case .chatState(let row): kinds.append("s:" + row.state.rawValue)
            case .presence(let row): kinds.append("p:" + row.availability.rawValue)
            }
            return true
        }
        #expect(kinds == ["p:available", "s:composing", "m:hi", "s:active", "m:hello back", "p:unavailable"])
        var plain: [String] = []
        try reader.transcript(account: Fixture.account, conversation: Fixture.peer) { event in
            if case .message(let row) = event { plain.append(row.body ?? "") }
            return true
        }
        #expect(plain == ["hi", "hello back"])
    }

    @Test func statsPerAccountAndConversation() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        _ = try writer.commitBlocking([
            .message(Fixture.message("a", at: 0, messageId: "1")),
            .message(Fixture.message("b", at: 10, direction: .outgoing, messageId: "2")),
            .message(Fixture.message("c", at: 5, conversation: "x@example.com", messageId: "3")),
        ])
        let stats = try archive.reader().stats()
        #expect(stats.totalMessages == 3)
        #expect(stats.accounts.count == 1)
        #expect(stats.accounts.first?.conversations == 2)
        #expect(stats.accounts.first?.firstTimestamp == Fixture.baseTime)
        #expect(stats.accounts.first?.lastTimestamp == Fixture.baseTime + 10)
        let peer = try #require(stats.conversations.first { $0.conversation == Fixture.peer })
        #expect(peer.messages == 2 && peer.incoming == 1 && peer.outgoing == 1)
        #expect(stats.archiveSizeBytes > 0)
    }
}
