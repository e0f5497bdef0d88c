/// XEP-0424 Message Retraction: the sender asks that a message of theirs be treated as never sent.
/// Version 1 is `<retract id='target' xmlns='urn:xmpp:message-retract:1'/>`; version 0 (slixmpp 1.8, older
/// clients) wraps it, `<apply-to id='target' xmlns='urn:xmpp:fasten:0'><retract xmlns='…retract:0'/></apply-to>`.
/// A moderation (XEP-0425) is a retraction by the room; see `Moderation`.
public enum Retraction {
    /// The id of the message the sender retracts (its origin-id or `id` in a chat, the room's stanza-id in a
    /// group chat); nil when the message retracts nothing, or is a moderation.
    public static func target(in message: Message) -> String? {
        if let retract = message.element.child("retract", namespace: Namespace.retract),
           retract.child(inNamespace: Namespace.moderate) == nil, let id = retract[attribute: "id"], !id.isEmpty {
            return id
        }
        if let applyTo = message.element.child("apply-to", namespace: Namespace.fasten),
           applyTo.child("retract", namespace: Namespace.legacyRetract) != nil, let id = applyTo[attribute: "id"], !id.isEmpty {
            return id
        }
        return nil
    }
}
