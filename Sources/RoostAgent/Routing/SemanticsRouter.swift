import RoostArchive
import RoostXMPP

/// What a message says about earlier messages — reactions (XEP-0444), retractions (XEP-0424), moderation
/// (XEP-0425), receipts (XEP-0184) and chat markers (XEP-0333) — as archive annotations. Called by
/// `StanzaRouter.records` for every path a message takes (live, carbon, the account's and rooms' archives), so
/// each is stored the same way whichever copy comes first. Pure.
enum SemanticsRouter {
    struct Found {
        var annotations: [MessageAnnotation] = []
        /// The message is only a reaction, retraction or moderation: its body is a fallback, never a message.
        var replacesMessage = false
    }

    /// `from` is the sender as routed (the room occupant, the contact, the user's other client); `room` is set
    /// for a group chat message (the caller checked it came from that room).
    static func annotations(in message: Message, direction: MessageDirection, conversation: JID, from: JID, senderName: String,
                            room: RoomRoute?, source: MessageSource, context: RoutingContext, timestamp: Int64,
                            stanzaID: String?) -> Found {
        var found = Found()
        func annotation(_ kind: MessageAnnotation.Kind, target: String) -> MessageAnnotation {
            MessageAnnotation(account: context.account.description, conversation: conversation.description, kind: kind, target: target,
                              from: from.description, direction: direction, groupchat: room != nil,
                              occupantId: room != nil ? OccupantID.id(in: message.element) : nil, senderName: senderName,
                              timestamp: timestamp, source: source, messageId: message.id, stanzaId: stanzaID,
                              keepRetractedText: context.keepRetracted)
        }
        if let moderation = Moderation.notice(in: message) {
            // Only a room speaks for its moderators; the archive checks the sender is the room itself.
            if room != nil {
                found.annotations.append(annotation(.moderation(moderator: moderation.moderator, reason: moderation.reason),
                                                    target: moderation.target))
            }
            found.replacesMessage = true
            return found
        }
        if let target = Retraction.target(in: message) {
            found.annotations.append(annotation(.retraction, target: target))
            found.replacesMessage = true
        }
        if let update = Reactions.update(in: message) {
            found.annotations.append(annotation(.reactions(update.emojis), target: update.target))
            found.replacesMessage = true
        }
        if let marker = ChatMarkers.marker(in: message) {
            found.annotations.append(annotation(marker.kind == .received ? .received : .displayed, target: marker.id))
        } else if let receipt = Receipts.receivedID(in: message) {
            found.annotations.append(annotation(.received, target: receipt))
        }
        return found
    }
}
