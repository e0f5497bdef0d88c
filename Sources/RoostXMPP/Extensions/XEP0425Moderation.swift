/// XEP-0425 Moderated Message Retraction: a room announces that a moderator removed a message. Version 1 is
/// `<retract id='stanza-id' xmlns='…retract:1'><moderated by='room/mod' xmlns='…moderate:1'/><reason/></retract>`;
/// version 0 is `<apply-to id='stanza-id' xmlns='urn:xmpp:fasten:0'><moderated by='…' xmlns='…moderate:0'>
/// <retract xmlns='…retract:0'/><reason/></moderated></apply-to>`. Only the room itself (its bare JID) may send it;
/// the caller checks that.
public enum Moderation {
    public struct Notice: Sendable, Equatable {
        /// The room's stanza-id of the removed message.
        public var target: String
        /// The moderator, as the room names them (`room/nick`), if it does.
        public var moderator: String?
        public var reason: String?
    }

    public static func notice(in message: Message) -> Notice? {
        if let retract = message.element.child("retract", namespace: Namespace.retract),
           let moderated = retract.child("moderated", namespace: Namespace.moderate), let id = retract[attribute: "id"], !id.isEmpty {
            return Notice(target: id, moderator: moderated[attribute: "by"],
                          reason: retract.child("reason", namespace: Namespace.retract)?.text.nonEmptyText)
        }
        if let applyTo = message.element.child("apply-to", namespace: Namespace.fasten),
           let moderated = applyTo.child("moderated", namespace: Namespace.legacyModerate),
           moderated.child("retract", namespace: Namespace.legacyRetract) != nil, let id = applyTo[attribute: "id"], !id.isEmpty {
            return Notice(target: id, moderator: moderated[attribute: "by"],
                          reason: moderated.child("reason", namespace: Namespace.legacyModerate)?.text.nonEmptyText)
        }
        return nil
    }
}

private extension String {
    var nonEmptyText: String? { isEmpty ? nil : self }
}
