import Foundation
import Testing
@testable import RoostArchive

/// Schema v3: OMEMO messages keep how they were encrypted; an undecryptable one has no body until a late
/// decryption fills it in, and then search finds it.
@Suite struct ArchiveEncryptionTests {
    @Test func encryptionIsStoredShownAndFilledInLater() throws {
        let archive = TemporaryArchive()
        let writer = try archive.writer()
        var decrypted = Fixture.message("secret plans 秘密", stanzaId: "S1", originId: "o1")
        decrypted.encryption = MessageEncryption(protocolNamespace: "urn:xmpp:omemo:2", senderDevice: 42, fingerprint: "ab", trust: "untrusted")
        var failed = Fixture.message(nil, at: 1000, stanzaId: "S2", originId: "o2")
        failed.rawStanza = "<message><encrypted/></message>"
        failed.encryption = MessageEncryption(protocolNamespace: "eu.siacs.conversations.axolotl", senderDevice: 7,
                                              failure: "no session with the sender's device")
        let outcomes = try writer.commitBlocking([.message(decrypted), .message(failed)])
        guard case .inserted(let failedID) = outcomes[1] else { Issue.record("not inserted"); return }

        let reader = try archive.reader()
        let rows = try reader.search(query: "secret")
        #expect(rows.count == 1 && rows.first?.encryption == decrypted.encryption)
        #expect(try reader.containsMessage(account: Fixture.account, conversation: Fixture.peer, direction: .incoming,
                                           trustedStanzaID: nil, originID: "o1"))
        #expect(try reader.containsMessage(account: Fixture.account, conversation: Fixture.peer, direction: .incoming,
                                           trustedStanzaID: "S2", originID: nil))
        #expect(try !reader.containsMessage(account: Fixture.account, conversation: Fixture.peer, direction: .incoming,
                                            trustedStanzaID: "S3", originID: "o3"))
        let pending = try reader.undecryptableMessages(account: Fixture.account)
        #expect(pending.map(\.id) == [failedID])
        let last = try reader.lastMessageEncryption(account: Fixture.account, conversation: Fixture.peer)
        #expect(last??.failure == "no session with the sender's device")

        let later = MessageEncryption(protocolNamespace: "eu.siacs.conversations.axolotl", senderDevice: 7, fingerprint: "cd", trust: "blind")
        let update = try writer.commitBlocking([.messageDecrypted(MessageDecryption(messageID: failedID, body: "found it later", encryption: later))])
        #expect(update == [.stored])
        #expect(try reader.search(query: "later").first?.encryption == later)
        #expect(try reader.undecryptableMessages(account: Fixture.account).isEmpty)
        // A second late decryption of the same row changes nothing.
        #expect(try writer.commitBlocking([.messageDecrypted(MessageDecryption(messageID: failedID, body: "again", encryption: later))])
                == [.duplicate(existingId: failedID)])
    }
}
