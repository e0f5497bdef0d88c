import RoostCore
import Foundation
import RoostArchive
import RoostXMPP
import RoostOMEMO

/// `message.send`: one chat message, archived as outgoing. It carries an XEP-0359 origin-id so the copy the
/// server archive hands back later is recognised as the same message.
///
/// The message is refused before anything happens when it is larger than the server accepts (XEP-0478, or
/// `max_send_bytes`). It is archived `pending` before it is written to the stream, and `sent` once the
/// server acknowledged it (XEP-0198; a ping's answer without stream management). A message the server has
/// not confirmed within the wait stays pending: the agent settles it later (see `SchemaV2`).
public struct SendMessageAction: AccountAction {
    public static let command = "message.send"

    public var to: String
    public var body: String
    /// Send unencrypted even into an encrypted conversation.
    public var plaintext: Bool?

    public init(to: String, body: String, plaintext: Bool = false) {
        self.to = to
        self.body = body
        self.plaintext = plaintext ? true : nil
    }

    public struct Sent: Codable, Sendable, Equatable {
        public var to: String
        public var id: String
        public var timestamp: Int64
        /// The server confirmed it received the message (false: still pending, settled later).
        public var confirmed: Bool?
        /// `omemo` when the message went out encrypted.
        public var encryption: String?
        /// How many devices it was encrypted for.
        public var devices: Int?
        /// The account was not online (the agent is reconnecting): archived and in the outbox, sent once it is.
        public var queued: Bool?
    }

    /// At most this many messages wait in an account's outbox.
    public static let outboxLimit = 1000

    /// How long `perform` waits for the server's confirmation.
    static let confirmationWait: Duration = .seconds(15)

    public func perform(in context: ActionContext) async throws(ActionFailure) -> Sent {
        let recipient = try JIDArgument.bare(to)
        guard !body.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw ActionFailure(.invalidArgument, "the message is empty")
        }
        if let rooms = context.rooms, let occupant = await rooms.occupant(in: recipient) {
            // A room the agent is in: a group chat message.
            return try await RoomSend.send(body: body, to: recipient, as: occupant, plaintext: plaintext == true, in: context)
        }
        try RoomSend.refuseKnownRoom(recipient, in: context)
        let id = StanzaID.make()
        var encrypted: OMEMOService.Outgoing?
        if let preferred = try Self.encryptionNeeded(for: recipient, plaintext: plaintext == true, in: context) {
            encrypted = try await context.omemo!.encrypt(body, to: recipient, id: id, preferred: preferred, client: context.client)
        }
        var (message, record) = try compose(to: recipient, id: id, encrypted: encrypted?.message, account: context.account,
                                            from: context.client.boundJID ?? context.account, limit: context.client.outboundStanzaLimit)
        record.encryption = encrypted?.encryption
        let confirmed = try await Self.deliver(message, archived: record, in: context)
        return Sent(to: recipient.description, id: id, timestamp: record.timestamp, confirmed: confirmed,
                    encryption: encrypted?.encryption.scheme, devices: encrypted?.recipients)
    }

    /// The chat message to `recipient` (`encrypted`: its OMEMO message, else the body in the clear) and its record
    /// (`pending`), or `tooLarge` when it is over `limit` bytes as sent.
    private func compose(to recipient: JID, id: String, encrypted: Message?, account: JID, from: JID,
                         limit: Int) throws(ActionFailure) -> (Message, MessageRecord) {
        var message = encrypted ?? Message(to: recipient, type: .chat, body: body, id: id)
        if encrypted == nil { message.add(StanzaIDs.originIDElement(id)) }
        message.add(Element("active", namespace: Namespace.chatStates))
        // Invite the contact's clients to say when they got and showed it (ticks in `roost log`).
        message.add(Receipts.request)
        message.add(ChatMarkers.markable)
        let size = XMLSerializer.serialize(message.element, parentNamespace: Namespace.client).utf8.count
        guard size <= limit else {
            throw ActionFailure(.tooLarge, "the message is \(size) bytes as sent; the server accepts at most \(limit) (nothing was sent)")
        }
        let now = Timestamp.now()
        var stored = message
        stored.element[attribute: "from"] = from.description
        let record = MessageRecord(account: account.description, conversation: recipient.description, direction: .outgoing,
                                   kind: .chat, from: from.description, to: recipient.description,
                                   senderName: account.description, body: body, timestamp: now, receivedAt: now,
                                   originId: id, messageId: id, source: .live, rawStanza: XMLSerializer.serialize(stored.element),
                                   delivery: .pending)
        return (message, record)
    }

    /// The account is not online (the agent is reconnecting): the message is archived `pending` and put in the
    /// outbox (`SchemaV16`), which the agent sends in order once the account is online. Only a plain chat message
    /// to a contact waits there: a room needs Roost in it, and an encrypted conversation the server's device lists.
    /// `state`: the account's state, for the answers. `limit`: `max_send_bytes`.
    func queue(account: JID, state: String, archive: ActionArchive, archivePath: String, omemo: Bool,
               omemoSend: OMEMOSendSetting, limit: Int) async throws(ActionFailure) -> Sent {
        let recipient = try JIDArgument.bare(to)
        guard !body.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw ActionFailure(.invalidArgument, "the message is empty")
        }
        let offline = "\(account) is not online (\(state))"
        let reader = FileManager.default.fileExists(atPath: archivePath) ? try? ArchiveReader(path: archivePath) : nil
        if let rooms = try? reader?.rooms(account: account.description),
           rooms.contains(where: { $0.jid.caseInsensitiveCompare(recipient.description) == .orderedSame }) {
            throw ActionFailure(.connection, "\(offline); \(recipient) is a group chat, and messages to rooms are not queued: send it once the account is online")
        }
        if omemo, plaintext != true, omemoSend != .never {
            let last = (try? reader?.lastMessageEncryption(account: account.description, conversation: recipient.description)) ?? nil
            if omemoSend == .always || (last ?? nil) != nil {
                throw ActionFailure(.connection, "\(offline); the conversation with \(recipient) is encrypted (OMEMO), which needs the server: send it once the account is online, or now unencrypted with --plaintext")
            }
        }
        if let waiting = try? reader?.outboxCount(account: account.description), waiting >= Self.outboxLimit {
            throw ActionFailure(.refused, "\(offline) and \(waiting) messages already wait to be sent (at most \(Self.outboxLimit)); try again once it is online")
        }
        let id = StanzaID.make()
        let (_, record) = try compose(to: recipient, id: id, encrypted: nil, account: account, from: account.bare, limit: limit)
        try await archive.record([.message(record), .outbox(account: account.description, originID: id, queued: true, timestamp: record.timestamp)])
        return Sent(to: recipient.description, id: id, timestamp: record.timestamp, confirmed: false, queued: true)
    }

    /// Archives `record` (delivery `pending`), sends `message` (whose id is its origin-id) and marks it `sent`
    /// once the server confirms; returns whether it did within the wait. Shared with `SendFileAction`.
    static func deliver(_ message: Message, archived record: MessageRecord, in context: ActionContext) async throws(ActionFailure) -> Bool {
        guard let id = record.originId else { preconditionFailure("an outgoing message carries an origin-id") }
        try await context.archive.record([.message(record)])
        do {
            try context.client.send(message, tracking: id)
        } catch {
            try? await context.archive.record([.delivery(account: context.account.description, originIDs: [id], state: .failed)])
            throw ActionFailure.from(error, doing: "sending to \(record.conversation)")
        }
        let confirmed = await context.client.confirmDelivery(timeout: Self.confirmationWait)
        if confirmed {
            try await context.archive.record([.delivery(account: context.account.description, originIDs: [id], state: .sent)])
        }
        return confirmed
    }

    /// nil: send plaintext. Else encrypt, preferring the namespace the conversation last used (nil inside: none).
    /// `omemo_send = auto` encrypts when the conversation's newest message was encrypted; plaintext into such a
    /// conversation needs `--plaintext`. (Also decides for `SendFileAction`.)
    static func encryptionNeeded(for recipient: JID, plaintext: Bool, in context: ActionContext) throws(ActionFailure) -> OMEMONamespace?? {
        guard context.omemo != nil, !plaintext, context.omemoSend != .never else { return nil }
        let last = (try? ArchiveReader(path: context.archivePath ?? "").lastMessageEncryption(account: context.account.description,
                                                                                          conversation: recipient.description)) ?? nil
        let lastEncryption = last ?? nil
        guard context.omemoSend == .always || lastEncryption != nil else { return nil }
        return .some(lastEncryption?.protocolNamespace.flatMap(OMEMONamespace.init(rawValue:)))
    }
}
