/// XEP-0249 Direct MUC Invitations: a contact invites the user to a room in a message of its own.
public enum DirectInvitation {
    /// The invitation in `message`, if it carries `<x xmlns='jabber:x:conference' jid='room@service'/>`.
    public static func invitation(in message: Message) -> Invitation? {
        guard let x = message.element.child("x", namespace: Namespace.directInvitation),
              let room = JID(parsing: x[attribute: "jid"]), room.localpart != nil else { return nil }
        return Invitation(room: room.bare, inviter: message.from, reason: x[attribute: "reason"],
                          password: x[attribute: "password"], kind: .direct)
    }

    public static func message(to: JID, room: JID, reason: String? = nil) -> Message {
        var message = Message(to: to, type: .normal)
        var x = Element("x", namespace: Namespace.directInvitation, attributes: [("jid", room.bare.description)])
        if let reason { x[attribute: "reason"] = reason }
        message.add(x)
        return message
    }
}
