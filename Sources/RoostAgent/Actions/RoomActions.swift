import RoostCore
import Foundation
import RoostArchive
public import RoostXMPP

extension ActionContext {
    /// The agent's room manager for the account; group chats need the running agent (it is the one in the rooms).
    func roomManager(doing what: String) throws(ActionFailure) -> RoomManager {
        guard let rooms else {
            throw ActionFailure(.connection, "\(what) needs the running agent, which is the one in the rooms: start `roost run` (or the systemd unit)")
        }
        return rooms
    }
}

extension JIDArgument {
    /// A room's bare JID (`room@service`).
    public static func room(_ text: String) throws(ActionFailure) -> JID {
        let jid = try bare(text)
        guard jid.localpart != nil else { throw ActionFailure(.invalidArgument, "'\(text)' is not a room's JID (expected room@service)") }
        return jid
    }
}

/// `rooms.join`: join a room now and at every start (until `rooms.leave`), optionally bookmarking it.
public struct RoomJoinAction: AccountAction {
    public static let command = "rooms.join"
    public var room: String
    public var nick: String?
    /// Run for the room's password at each join (kept as a reference, never its output).
    public var passwordCommand: String?
    /// Also publish a bookmark with autojoin, so the user's other clients join too.
    public var bookmark: Bool?

    public init(room: String, nick: String? = nil, passwordCommand: String? = nil, bookmark: Bool = false) {
        self.room = room
        self.nick = nick
        self.passwordCommand = passwordCommand
        self.bookmark = bookmark ? true : nil
    }

    public struct Joined: Codable, Sendable, Equatable {
        public var room: String
        public var nick: String
    }

    static let wait: Duration = .seconds(30)

    public func perform(in context: ActionContext) async throws(ActionFailure) -> Joined {
        let jid = try JIDArgument.room(room)
        if let nick, nick.isEmpty || nick.contains(where: \.isNewline) { throw ActionFailure(.invalidArgument, "the nick must be one line") }
        let rooms = try context.roomManager(doing: "joining a room")
        switch await rooms.join(jid, nick: nick, passwordCommand: passwordCommand, bookmark: bookmark == true, waitFor: Self.wait) {
        case .joined(let nick): return Joined(room: jid.description, nick: nick)
        case .failed(let why): throw ActionFailure(.refused, "\(jid): \(why)")
        }
    }
}

/// `rooms.leave`: leave a room and no longer join it at start (its bookmark, if any, loses autojoin).
public struct RoomLeaveAction: AccountAction {
    public static let command = "rooms.leave"
    public var room: String

    public init(room: String) { self.room = room }

    public func perform(in context: ActionContext) async throws(ActionFailure) -> ActionDone {
        let jid = try JIDArgument.room(room)
        let rooms = try context.roomManager(doing: "leaving a room")
        let wasIn = await rooms.leaveByUser(jid)
        return ActionDone(wasIn ? "left \(jid); it is no longer joined at start" : "\(jid) is not joined; it is no longer joined at start")
    }
}

/// `rooms.list`: the rooms the agent knows of, with their live state.
public struct RoomsListAction: AccountAction {
    public static let command = "rooms.list"

    public init() {}

    public struct Room: Codable, Sendable, Equatable {
        public var room: String
        public var name: String?
        public var nick: String?
        /// `joined`, `joining` or `out`.
        public var state: String
        public var bookmarked: Bool
        public var autojoin: Bool
        /// Roost should be in it (autojoin bookmark, config, `roost rooms join`).
        public var wanted: Bool
        public var mam: Bool?
        public var lastError: String?
        /// When a read of the room's archive last completed in this run (UTC milliseconds; absent from older agents).
        public var archiveRead: Int64?
    }

    public func perform(in context: ActionContext) async throws(ActionFailure) -> [Room] {
        let rooms = try context.roomManager(doing: "listing the rooms' state")
        return await rooms.summaries().map {
            Room(room: $0.room, name: $0.name, nick: $0.nick, state: $0.state, bookmarked: $0.bookmarked, autojoin: $0.autojoin,
                 wanted: $0.wanted, mam: $0.mam, lastError: $0.lastError, archiveRead: $0.archiveRead)
        }
    }
}

/// `rooms.decline`: decline the pending invitations to a room (through the room for mediated ones).
public struct InvitationDeclineAction: AccountAction {
    public static let command = "rooms.decline"
    public var room: String

    public init(room: String) { self.room = room }

    public func perform(in context: ActionContext) async throws(ActionFailure) -> ActionDone {
        let jid = try JIDArgument.room(room)
        let rooms = try context.roomManager(doing: "declining an invitation")
        let pending = ((try? ArchiveReader(path: context.archivePath ?? "").invitations(account: context.account.description)) ?? [])
            .filter { $0.room.caseInsensitiveCompare(jid.description) == .orderedSame }
        guard !pending.isEmpty else { throw ActionFailure(.notFound, "no pending invitation to \(jid)") }
        for invitation in pending {
            await rooms.decline(jid, inviter: invitation.inviter.flatMap { JID(parsing: $0) }, mediated: invitation.kind == .mediated)
        }
        return ActionDone("declined the invitation to \(jid)")
    }
}

/// `roost send ROOM`: a group chat message, archived pending and settled by the room's echo or the server's ack.
enum RoomSend {
    /// A chat message to a room would only bounce: say why instead (Roost is not in it, or no agent runs).
    static func refuseKnownRoom(_ jid: JID, in context: ActionContext) throws(ActionFailure) {
        guard let path = context.archivePath, let reader = try? ArchiveReader(path: path),
              let rooms = try? reader.rooms(account: context.account.description),
              rooms.contains(where: { $0.jid.caseInsensitiveCompare(jid.description) == .orderedSame }) else { return }
        if context.rooms == nil {
            throw ActionFailure(.connection, "\(jid) is a group chat: sending to it goes through the running agent, which is the one in the room (start `roost run`)")
        }
        throw ActionFailure(.refused, "Roost is not in \(jid) now (see `roost rooms`); join it with `roost rooms join \(jid)`")
    }

    /// A group chat message; encrypted for the members' devices in an encrypted room (its newest message was, or
    /// `omemo_send = always`), as `SendMessageAction` does for a contact.
    static func send(body: String, to room: JID, as occupant: JID, plaintext: Bool, in context: ActionContext) async throws(ActionFailure) -> SendMessageAction.Sent {
        let id = StanzaID.make()
        var message = Message(to: room, type: .groupchat, body: body, id: id)
        message.add(StanzaIDs.originIDElement(id))
        var encrypted: OMEMOService.Outgoing?
        if let preferred = try SendMessageAction.encryptionNeeded(for: room, plaintext: plaintext, in: context), let rooms = context.rooms {
            encrypted = try await context.omemo!.encrypt(body, to: room, type: .groupchat, readers: rooms.members(of: room), id: id,
                                                         preferred: preferred, client: context.client)
            message = encrypted!.message
        }
        let size = XMLSerializer.serialize(message.element, parentNamespace: Namespace.client).utf8.count
        let limit = context.client.outboundStanzaLimit
        guard size <= limit else {
            throw ActionFailure(.tooLarge, "the message is \(size) bytes as sent; the server accepts at most \(limit) (nothing was sent)")
        }
        let now = Timestamp.now()
        var stored = message
        stored.element[attribute: "from"] = occupant.description
        // The room's echo carries the same origin-id and comes from this occupant JID: the same row (see DedupKey).
        var record = MessageRecord(account: context.account.description, conversation: room.description, direction: .outgoing,
                                   kind: .groupchat, from: occupant.description, to: room.description, senderName: occupant.resource,
                                   body: body, timestamp: now, receivedAt: now, originId: id, messageId: id, source: .live,
                                   rawStanza: XMLSerializer.serialize(stored.element), delivery: .pending)
        record.encryption = encrypted?.encryption
        try await context.archive.record([.message(record)])
        do {
            try context.client.send(message, tracking: id)
        } catch {
            try? await context.archive.record([.delivery(account: context.account.description, originIDs: [id], state: .failed)])
            throw ActionFailure.from(error, doing: "sending to \(room)")
        }
        let confirmed = await context.client.confirmDelivery(timeout: SendMessageAction.confirmationWait)
        if confirmed {
            try await context.archive.record([.delivery(account: context.account.description, originIDs: [id], state: .sent)])
        }
        return SendMessageAction.Sent(to: room.description, id: id, timestamp: now, confirmed: confirmed,
                                      encryption: encrypted?.encryption.scheme, devices: encrypted?.recipients)
    }
}
