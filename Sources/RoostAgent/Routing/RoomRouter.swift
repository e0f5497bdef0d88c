import Foundation
import RoostCore
import RoostArchive
import RoostXMPP

/// The group chat part of routing (XEP-0045 and friends): room messages and subjects, occupants' presence,
/// MUC private messages, invitations and bookmark changes. Pure, like `StanzaRouter`, which asks it first.
///
/// The rules that keep a room's archive honest:
/// - a group chat message, a subject or a room stanza-id is accepted only from a room Roost is in or joining
///   (`context.rooms`), whose JID the user's server stamps — nobody else can speak for a room;
/// - a room's stanza-id is trusted only when the room keeps an archive (it advertises MAM);
/// - the user's own messages (the same occupant id as Roost's, the user's real JID, or Roost's nick where the
///   room gives no ids) are outgoing, so the echo of a message sent from another client is stored once, as sent;
/// - bookmark changes count only from the account itself (PEP); invitations are archived and shown, and only a
///   direct invitation from a roster contact may ever be accepted without the user.
enum RoomRouter {
    /// The outcome for a live message that concerns rooms; nil when it does not (normal routing goes on).
    static func route(message: Message, context: RoutingContext, now: Int64) -> StanzaRouter.Outcome? {
        var outcome = StanzaRouter.Outcome()
        let account = context.account
        if let changes = Bookmarks.changes(in: message) {
            guard message.from == nil || message.from == account.bare else {
                outcome.rejected = "bookmark event from \(message.fromAttribute ?? "?"), not from the account"
                return outcome
            }
            outcome.notes.append(.room(.bookmarks(changes)))
            return outcome
        }
        if let invitation = MUC.mediatedInvitation(in: message) ?? DirectInvitation.invitation(in: message) {
            return self.invitation(invitation, message: message, context: context, now: now)
        }
        guard let from = message.from else {
            if message.type == .groupchat { outcome.rejected = "group chat message without a sender" }
            return message.type == .groupchat ? outcome : nil
        }
        guard let room = context.rooms[from.bare] else {
            if message.type == .groupchat {
                outcome.rejected = "group chat message from \(from), not a room Roost is in"
                return outcome
            }
            return nil
        }
        guard message.type == .groupchat else {
            // A private message from an occupant: its own conversation (room@service/nick), routed like a chat.
            return nil
        }
        outcome.events = groupchatRecords(message, room: room, source: .live, context: context, now: now)
        if let subject = message.subject, message.body == nil {
            if subject.nonEmpty != room.subject { outcome.notes.append(.room(.subject(room: room.room, subject: subject.nonEmpty, by: from.resource))) }
            if room.history { outcome.notes.append(.room(.historyEnded(room: room.room))) }
        }
        for (index, event) in outcome.events.enumerated() {
            guard case .message(let record) = event, record.body != nil || record.encryption != nil else { continue }
            if record.direction == .incoming {
                outcome.notes.append(.incomingMessage(eventIndex: index))
                if mentions(message, body: record.body, room: room, account: account) { outcome.notes.append(.mention(eventIndex: index)) }
            } else {
                // The user wrote in the room from another client: the room counts as read.
                outcome.notes.append(.userWrote(conversation: room.room.description, at: now))
                outcome.notes.append(.conversationRead(conversation: room.room.description))
            }
        }
        return outcome
    }

    /// An invitation (live, or found in the account's archive): archived, and told to the room manager and the
    /// notifications. A mediated invitation names its inviter on the room's word only: never treated as a contact's.
    static func invitation(_ invitation: Invitation, message: Message, context: RoutingContext, now: Int64) -> StanzaRouter.Outcome {
        var outcome = StanzaRouter.Outcome()
        let fromContact = invitation.kind == .direct && message.from.map { context.contacts.contains($0.bare) } == true
        var record = InvitationRecord(
            account: context.account.description, room: invitation.room.description, inviter: invitation.inviter?.description,
            kind: invitation.kind == .direct ? .direct : .mediated, reason: invitation.reason, password: invitation.password,
            fromContact: fromContact, timestamp: now)
        record.messageId = message.id
        outcome.events.append(.invitation(record))
        outcome.notes.append(.room(.invitation(invitation, fromContact: fromContact)))
        return outcome
    }

    /// Occupants' presence and refused joins of rooms Roost is in or joining; nil for other presence.
    static func route(presence: Presence, context: RoutingContext, now: Int64) -> StanzaRouter.Outcome? {
        guard let from = presence.from else { return nil }
        guard let room = context.rooms[from.bare] else {
            // A room Roost left: nothing to store, and no contact's presence either.
            return presence.element.child("x", namespace: Namespace.mucUser) != nil ? StanzaRouter.Outcome() : nil
        }
        var outcome = StanzaRouter.Outcome()
        if let refused = MUC.joinError(in: presence) {
            outcome.notes.append(.room(.joinFailed(room: refused.room, nick: refused.nick, error: refused.error)))
            return outcome
        }
        guard let occupant = MUC.occupantPresence(in: presence) else { return outcome }
        outcome.events.append(.roomPresence(RoomPresenceRecord(
            account: context.account.description, room: room.room.description, nick: occupant.nick, available: occupant.available,
            occupantId: occupant.occupantID, realJid: occupant.realJID?.bare.description, role: occupant.role,
            affiliation: occupant.affiliation, show: occupant.show, status: occupant.status, statusCodes: occupant.statusCodes.sorted(),
            newNick: occupant.newNick, reason: occupant.reason, destroyed: occupant.destroyed, initial: !room.joined, timestamp: now)))
        if !occupant.isSelf {
            outcome.notes.append(.room(.occupant(room: room.room, nick: occupant.nick, realJID: occupant.realJID?.bare,
                                                 available: occupant.available, newNick: occupant.newNick)))
        } else {
            if occupant.available {
                outcome.notes.append(.room(.joined(room: room.room, nick: occupant.nick, occupantID: occupant.occupantID,
                                                   statusCodes: occupant.statusCodes)))
            } else {
                outcome.notes.append(.room(.left(room: room.room, nick: occupant.nick, statusCodes: occupant.statusCodes,
                                                 reason: occupant.reason, newNick: occupant.newNick, destroyed: occupant.destroyed)))
            }
        }
        return outcome
    }

    /// The records of one group chat message (live, or a result of the room's archive with its `archiveID` and
    /// `stamp`). The caller made sure it came from `room`.
    static func groupchatRecords(_ message: Message, room: RoomRoute, source: MessageSource, context: RoutingContext, now: Int64,
                                 archiveID: String? = nil, stamp: Int64? = nil) -> [ArchiveEvent] {
        if message.type == .error { return [] }
        if let subject = message.subject, message.body == nil, subject.nonEmpty == room.subject, source == .live {
            // The room repeats its subject at every join: stored once, when it changes.
            return []
        }
        let direction: MessageDirection = isOwn(message, room: room, account: context.account) ? .outgoing : .incoming
        return StanzaRouter.records(for: message, direction: direction, source: source, context: context, now: now,
                                    stanzaIDSource: message, archiveID: archiveID, room: room, stamp: stamp)
    }

    /// Whether the user wrote this (from Roost or another client): the room's id for the sender is Roost's own,
    /// or the room shows the user's real JID, or — where the room gives neither — the nick is Roost's.
    static func isOwn(_ message: Message, room: RoomRoute, account: JID) -> Bool {
        if let real = realJID(in: message), real.bare == account.bare { return true }
        let occupant = OccupantID.id(in: message.element)
        if let occupant, let own = room.occupantID { return occupant == own }
        return message.from?.resource == room.nick && message.from?.bare == room.room
    }

    /// The sender's real JID a room put on a message (`<x muc#user><item jid/>`, non-anonymous rooms' archives).
    static func realJID(in message: Message) -> JID? {
        JID(parsing: message.element.child("x", namespace: Namespace.mucUser)?.child("item", namespace: Namespace.mucUser)?[attribute: "jid"])
    }
    /// A mention: one of the user's names as a whole word (case-insensitive), or a XEP-0372 reference to the
    /// account or to Roost's occupant JID.
    static func mentions(_ message: Message, body: String?, room: RoomRoute, account: JID) -> Bool {
        let referenced = References.mentions(in: message)
        if referenced.contains(where: { $0.bare == account.bare && $0.resource == nil || $0 == room.occupantJID }) { return true }
        guard let body else { return false }
        return Mention.containsAnyWord(of: room.mentionNames, in: body)
    }
}

extension String {
    /// nil for the empty string (an empty `<subject/>` clears the subject).
    var nonEmpty: String? { isEmpty ? nil : self }
}
