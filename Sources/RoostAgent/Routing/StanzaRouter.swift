import Foundation
import RoostArchive
import RoostCore
import RoostXMPP

/// Turns one inbound stanza into what the archive stores and what must be answered.
///
/// Pure: no I/O, so every rule (carbon validation, spoofed roster pushes, corrections, chat states)
/// is tested with scripted stanzas in memory.
enum StanzaRouter {
    struct Outcome: Sendable {
        var events: [ArchiveEvent] = []
        /// Stanzas to send back (roster push results, error replies).
        var replies: [Element] = []
        /// Roster changes to apply to the in-memory name map.
        var rosterChanges: [RosterItem] = []
        /// Something dropped on purpose, with why (logged at debug, counted in tests).
        var rejected: String?
        /// What the notification layer should hear about once the events are committed.
        var notes: [RoutingNote] = []
    }

    /// An `<encrypted/>` message (OMEMO) as the decryptor needs it.
    struct EncryptedInput: Sendable {
        var message: Message
        var sender: JID
        var conversation: JID
        var direction: MessageDirection
        /// The server's stanza-id, when trusted (the archive's dedup key).
        var stanzaID: String?
    }

    enum DecryptionOutcome: Sendable, Equatable {
        case decrypted(body: String, MessageEncryption)
        /// Archived without a body, with the reason and the encrypted stanza.
        case undecryptable(MessageEncryption)
        /// Archive no message: key transport, heartbeat, or a copy of an archived message.
        case skip(String)
    }

    /// Decrypts for the router. A capability passed in through the context, so the router itself stays pure.
    typealias Decryptor = @Sendable (EncryptedInput) -> DecryptionOutcome

    static func route(_ element: Element, context: RoutingContext, now: Int64) -> Outcome {
        switch element.name {
        case "message": return route(message: Message(element), context: context, now: now)
        case "presence": return route(presence: Presence(element), context: context, now: now)
        case "iq": return route(iq: IQ(element), context: context, now: now)
        default: return Outcome()
        }
    }

    // MARK: - Messages

    static func route(message: Message, context: RoutingContext, now: Int64) -> Outcome {
        var outcome = Outcome()
        if message.type == .error { return outcome }
        if let roomOutcome = RoomRouter.route(message: message, context: context, now: now) { return roomOutcome }
        if let avatar = UserAvatar.metadata(in: message) {
            // PEP events come from the contact's own bare JID (the server publishes on its behalf).
            if let from = message.from, from.isBare, from != context.account.bare {
                outcome.notes.append(.pepAvatar(contact: from.description, id: avatar.id, mimeType: avatar.mimeType))
            }
            return outcome
        }
        if MAM.isResult(message) {
            // MAM results are only read by the catch-up, for its own query id; anything else here is unsolicited.
            outcome.rejected = "unsolicited MAM result from \(message.fromAttribute ?? "the server")"
            return outcome
        }
        if Carbons.claimsToBeCarbon(message) {
            guard let carbon = Carbons.unwrap(message, account: context.account) else {
                outcome.rejected = "forged carbon from \(message.fromAttribute ?? "?")"
                return outcome
            }
            guard carbon.inner.type != .groupchat else {
                // Rooms speak for themselves; a copy of a room message is no room message.
                outcome.rejected = "group chat message inside a carbon"
                return outcome
            }
            if carbon.direction == .received,
               let invitation = MUC.mediatedInvitation(in: carbon.inner) ?? DirectInvitation.invitation(in: carbon.inner) {
                // An invitation with a fallback body is copied like a chat message (it is one to the server).
                return RoomRouter.invitation(invitation, message: carbon.inner, context: context, now: now)
            }
            let direction: MessageDirection = carbon.direction == .sent ? .outgoing : .incoming
            outcome.events = records(for: carbon.inner, direction: direction, source: .carbon, context: context, now: now,
                                     stanzaIDSource: message, stamp: carbon.stamp)
            if carbon.direction == .sent, let peer = carbon.inner.to?.bare.description {
                // The user wrote, or marked the conversation read (XEP-0333), from another client.
                let wrote = carbon.inner.body != nil
                if wrote { outcome.notes.append(.userWrote(conversation: peer, at: now)) }
                if wrote || carbon.inner.element.child("displayed", namespace: Namespace.chatMarkers) != nil {
                    outcome.notes.append(.conversationRead(conversation: peer))
                }
            } else {
                outcome.notes += incomingNotes(outcome.events)
            }
            return outcome
        }
        outcome.events = records(for: message, direction: .incoming, source: .live, context: context, now: now, stanzaIDSource: message)
        outcome.notes = incomingNotes(outcome.events)
        return outcome
    }

    /// The archive events for one chat message (body and/or chat state), seen from the account.
    ///
    /// `stanzaIDSource` is the stanza carrying the server-assigned stanza-id: for a carbon, the wrapper
    /// (or else the forwarded message), for a live message itself. For a group chat message, `room` is the room
    /// it came from (the caller checked that it did, and decided the direction); its stanza-id is the room's.
    /// `stamp` is the time the server's own `<forwarded/>` wrapper gives (an archive result, the account's or the
    /// room's; a carbon); `MessageTime` decides what else counts. A message to or from an occupant of a room (a MUC
    /// private message) is a conversation of its own, `room@service/nick`: the room is one Roost is in, one it knows
    /// (`RoutingContext.knownRooms`: in a catch-up before the rooms are joined, in `roost verify`), or the message
    /// carries the `<x muc#user/>` the room (and the sender's client, XEP-0045 §7.5) adds to private messages.
    static func records(for message: Message, direction: MessageDirection, source: MessageSource, context: RoutingContext,
                        now: Int64, stanzaIDSource: Message, archiveID: String? = nil, room: RoomRoute? = nil,
                        stamp: Int64? = nil) -> [ArchiveEvent] {
        let account = context.account
        let from = message.from ?? (direction == .outgoing ? account : nil)
        let to = message.to ?? (direction == .incoming ? account : nil)
        let peer = room?.room ?? (direction == .incoming ? from : to)
        guard let peer else { return [] }
        let occupantPeer = room == nil && peer.resource != nil
            && (context.rooms[peer.bare] != nil || context.knownRooms.contains(peer.bare) || MUC.isPrivateMessage(message))
        let privateRoom = occupantPeer ? context.rooms[peer.bare] : nil
        let conversation = room?.room ?? (occupantPeer ? peer : peer.bare)
        let kind = MessageKind(rawValue: message.type.rawValue) ?? .normal
        let time = MessageTime(message, serverStamp: stamp, account: account, receivedAt: now,
                               offlineDelivery: source == .live && now <= context.offlineDeliveryUntil,
                               roomHistory: source == .live && room?.history == true ? room?.room : nil)
        let timestamp = time.timestamp
        var events: [ArchiveEvent] = []

        if let state = message.chatState, let archiveState = RoostArchive.ChatState(rawValue: state.rawValue), source != .mam, room == nil {
            events.append(.chatState(ChatStateRecord(account: account.description, conversation: conversation.description,
                                                      from: (from ?? peer).description, state: archiveState, timestamp: timestamp,
                                                      messageId: message.id)))
        }
        let senderJID = (from ?? peer).bare
        var senderName = direction == .outgoing ? (context.ownNickname ?? account.description)
            : (context.displayNames[senderJID] ?? senderJID.description)
        if room != nil {
            senderName = from?.resource ?? conversation.localpart ?? conversation.description
        } else if occupantPeer {
            senderName = direction == .incoming ? (peer.resource ?? senderName) : (privateRoom?.nick ?? senderName)
        }
        // Parsed once here (each `stanzaIDs` parses the ids' `by` addresses).
        let ids = message.stanzaIDs
        // Reactions, retractions, receipts and markers (schema v8); a reaction or retraction is no message itself.
        let semantics = SemanticsRouter.annotations(
            in: message, direction: direction, conversation: conversation, from: from ?? peer, senderName: senderName, room: room,
            source: source, context: context, timestamp: timestamp,
            stanzaID: archiveID ?? ids.id(by: room?.room ?? account) ?? stanzaIDSource.stanzaIDs.id(by: account))
        events += semantics.annotations.map(ArchiveEvent.annotation)
        if semantics.replacesMessage { return events }

        var body = message.body
        let subject = message.subject
        let encrypted = context.decryptor != nil && OMEMO.isEncrypted(message)
        // Files shared in the clear; an encrypted message's file is the link in its decrypted body (below): what
        // stands outside the encryption is neither confidential nor authenticated.
        var attachments = encrypted ? [] : SharedFiles.attachments(in: message)
        guard encrypted || body != nil || (subject != nil && kind == .groupchat) || !attachments.isEmpty else { return events }

        var stanzaID: String?
        var stanzaIDBy: String?
        var trusted = false
        if let archiveID {
            stanzaID = archiveID
            stanzaIDBy = (room?.room ?? account).description
            trusted = true
        } else if let room {
            // Only the room's own id, and only when the room keeps an archive (else its ids promise nothing).
            stanzaID = ids.id(by: room.room)
            stanzaIDBy = stanzaID.map { _ in room.room.description }
            trusted = stanzaID != nil && room.trustsStanzaIDs
        } else if let id = stanzaIDSource.stanzaIDs.id(by: account) ?? (source == .carbon ? ids.id(by: account) : nil) {
            // A carbon's id may sit on the wrapper or on the forwarded copy (the server stamped the original
            // before copying it); either way the carbon was validated as coming from our own server.
            stanzaID = id
            stanzaIDBy = account.description
            trusted = context.trustsOwnStanzaIDs
        }
        // In a room the sender is an occupant: its OMEMO sessions are those of its real JID, which a non-anonymous
        // room shows in its presence (or on its archive's copies). The user's own messages are the account's.
        let occupantRoom = room ?? privateRoom
        let realSender: JID? = occupantRoom.flatMap { occupantRoom in
            if direction == .outgoing { return account.bare }
            return (room != nil ? from?.resource : peer.resource).flatMap { occupantRoom.occupants[$0] }
                ?? RoomRouter.realJID(in: message)?.bare
        }
        var encryption: MessageEncryption?
        if encrypted, let decryptor = context.decryptor {
            let input = EncryptedInput(message: message, sender: realSender ?? from ?? peer,
                                       conversation: conversation, direction: direction, stanzaID: trusted ? stanzaID : nil)
            let outcome: DecryptionOutcome = occupantRoom != nil && realSender == nil
                ? .undecryptable(MessageEncryption(protocolNamespace: OMEMO.encrypted(in: message)?.namespace.rawValue,
                                                   failure: "the room does not show the sender's address (OMEMO needs a non-anonymous room)"))
                : decryptor(input)
            switch outcome {
            case .skip: return events
            case .decrypted(let text, let how):
                body = text
                encryption = how
                attachments = SharedFiles.attachments(inDecryptedBody: text)
            case .undecryptable(let how):
                // Never the fallback body ("I sent you an OMEMO encrypted message…"): raw keeps the payload.
                body = nil
                encryption = how
            }
        }
        var record = MessageRecord(
            account: account.description, conversation: conversation.description, direction: direction, kind: kind,
            from: (from ?? peer).description, to: (to ?? account).description, senderName: senderName,
            body: body, subject: subject, thread: message.thread, timestamp: timestamp, receivedAt: now,
            stanzaId: stanzaID, stanzaIdBy: stanzaIDBy, stanzaIdTrusted: trusted, originId: ids.originID,
            messageId: message.id, replaces: message.replacesID, isCarbon: source == .carbon, source: source,
            rawStanza: XMLSerializer.serialize(message.element),
            attachments: attachments)
        record.claimedAt = time.claimedAt
        record.encryption = encryption
        if let reply = Replies.target(in: message) {
            record.replyTo = reply.id
            record.replyToJid = reply.author
            // The quote of the message answered is a fallback for other clients, not the reply's own text.
            if encryption == nil, let own = Fallback.body(of: message, strippingFallbackFor: Namespace.reply) { record.body = own }
        }
        if room != nil || occupantPeer {
            // Set by the room itself (it strips what senders put there); a private message's copy is the room's too.
            record.occupantId = OccupantID.id(in: message.element)
            record.realJid = (RoomRouter.realJID(in: message)?.bare ?? realSender)?.description
        }
        events.append(.message(record))
        return events
    }

    private static func incomingNotes(_ events: [ArchiveEvent]) -> [RoutingNote] {
        events.indices.compactMap { i in
            if case .message(let m) = events[i], m.direction == .incoming, m.body != nil || m.encryption != nil || !m.attachments.isEmpty {
                return .incomingMessage(eventIndex: i)
            }
            return nil
        }
    }

    // MARK: - Presence

    static func route(presence: Presence, context: RoutingContext, now: Int64) -> Outcome {
        var outcome = Outcome()
        guard let from = presence.from else { return outcome }
        if let roomOutcome = RoomRouter.route(presence: presence, context: context, now: now) { return roomOutcome }
        let account = context.account.description
        switch presence.type {
        case .available, .unavailable:
            if presence.element.child("x", namespace: Namespace.mucUser) != nil { return outcome }
            // Roost's own presence, reflected by the server, says nothing; and when another client holds the same
            // resource, its comings and goings under this full JID (replacing Roost, being replaced) would be recorded
            // as Roost going offline and online.
            if from.bare == context.account.bare, let resource = from.resource, resource == context.ownResource { return outcome }
            if from.bare != context.account.bare, presence.type == .available, case .some(let hash) = VCardAvatarUpdate.photoHash(in: presence) {
                outcome.notes.append(.avatarHash(contact: from.bare.description, hash: hash))
            }
            if from.bare == context.account.bare, let resource = from.resource, resource != context.ownResource {
                // The user's other clients: the notification layer decides "away" from them.
                outcome.notes.append(.ownPresence(resource: resource, available: presence.type == .available, show: presence.show?.rawValue))
            }
            let availability: PresenceRecord.Availability = presence.type == .available ? .available : .unavailable
            outcome.events.append(.presence(PresenceRecord(account: account, contact: from.bare.description, resource: from.resource,
                                                           availability: availability, show: presence.show?.rawValue,
                                                           status: presence.status,
                                                           priority: presence.type == .available ? presence.priority : nil,
                                                           timestamp: now)))
        case .subscribe, .subscribed, .unsubscribe, .unsubscribed:
            guard from.bare != context.account.bare, let kind = SubscriptionRecord.Kind(rawValue: presence.type.rawValue) else { return outcome }
            outcome.events.append(.subscription(SubscriptionRecord(account: account, jid: from.bare.description, direction: .incoming,
                                                                   kind: kind, message: presence.status, timestamp: now)))
            if kind == .subscribe && context.approvedContacts.contains(from.bare) {
                // The user added this contact: its request is answered now, and the answer archived (settling it).
                outcome.replies.append(Presence(type: .subscribed, to: from.bare).element)
                outcome.events.append(.subscription(SubscriptionRecord(account: account, jid: from.bare.description, direction: .outgoing,
                                                                       kind: .subscribed, timestamp: now)))
            } else if kind == .subscribe {
                outcome.notes.append(.subscriptionRequest(from: from.bare.description, text: presence.status))
            }
        case .probe, .error:
            break
        }
        return outcome
    }

    // MARK: - IQ (roster pushes; the engine answers everything else)

    static func route(iq: IQ, context: RoutingContext, now: Int64) -> Outcome {
        var outcome = Outcome()
        guard iq.isRequest, iq.payload?.namespace == Namespace.roster else { return outcome }
        guard Roster.isLegitimatePush(iq, account: context.account) else {
            // RFC 6121 §2.1.6: ignore it and tell the sender nothing useful.
            outcome.replies.append(iq.errorReply(StanzaError(type: "cancel", condition: "service-unavailable")).element)
            outcome.rejected = "roster push from \(iq.fromAttribute ?? "?") refused"
            return outcome
        }
        outcome.replies.append(iq.result().element)
        for item in Roster.items(in: iq) {
            outcome.rosterChanges.append(item)
            outcome.events.append(rosterEvent(item, account: context.account, now: now))
        }
        return outcome
    }

    static func rosterEvent(_ item: RosterItem, account: JID, now: Int64) -> ArchiveEvent {
        if item.subscription == .remove {
            return .rosterRemoval(account: account.description, jid: item.jid.description, timestamp: now)
        }
        return .rosterItem(RosterItemRecord(account: account.description, jid: item.jid.description, name: item.name, groups: item.groups,
                                            subscription: item.subscription.rawValue, ask: item.askPending ? "subscribe" : nil,
                                            timestamp: now))
    }
}

/// When a message was sent, as far as Roost can believe it (XEP-0203): the time the server archive's or a
/// carbon's `<forwarded/>` wrapper gives, or a `<delay/>` the account's own server added to a message it kept
/// in offline storage, else the time Roost received it. A `<delay/>` from anyone else (the sender's client, or
/// a forger) is only a claim: kept as `claimedAt`, shown, never used for ordering, so a contact cannot date a
/// message into the future ("newest forever") or the past. A trusted time outside 1990 … now + 1 day is not
/// believed either.
///
/// Offline storage stamps `from` = the server's domain (Prosody, ejabberd) or the account's bare JID, but a
/// sender can write that `from` too. So such a stamp counts only while the server delivers its offline storage
/// (`offlineDelivery`: the first minute of a new session, see `RoutingContext.offlineDeliveryUntil`), and is
/// never later than the receipt (a server stores before it delivers).
struct MessageTime: Equatable {
    var timestamp: Int64
    var claimedAt: Int64?

    /// `roomHistory`: the room a group chat message came from while it may be sending its discussion history
    /// (`RoomRoute.history`), whose own `<delay/>` on that history (XEP-0045 §7.2.15) is the room's time. Outside
    /// the history such a stamp was written by an occupant (rooms relay what occupants send), so only a claim.
    init(_ message: Message, serverStamp: Int64?, account: JID, receivedAt now: Int64, offlineDelivery: Bool, roomHistory room: JID? = nil) {
        func plausible(_ t: Int64) -> Int64? {
            t >= Timestamp.earliestPlausible && t <= now + 86_400_000 ? t : nil
        }
        var trusted = serverStamp.flatMap(plausible)
        var claimed: Int64?
        for stamp in Delay.stamps(of: message.element) {
            let from = stamp.from.flatMap { JID(parsing: $0) }
            let fromServer = from.map { $0 == account.bare || ($0.localpart == nil && $0.resource == nil && $0.domain == account.domain) } ?? false
            let fromRoom = room != nil && from?.bare == room
            if (fromServer && offlineDelivery) || fromRoom, trusted == nil, let t = plausible(stamp.milliseconds) {
                trusted = min(t, now)
                continue
            }
            if claimed == nil { claimed = stamp.milliseconds }
        }
        timestamp = trusted ?? now
        claimedAt = claimed
    }
}
