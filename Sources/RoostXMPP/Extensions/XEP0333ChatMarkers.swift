/// XEP-0333 Chat Markers: `<received|displayed|acknowledged id='…'/>` says how far a client got in a
/// conversation (everything up to that message); `<markable/>` on a message invites them.
public enum ChatMarkers {
    public enum Kind: String, Sendable, CaseIterable {
        case received, displayed, acknowledged
    }

    public struct Marker: Sendable, Equatable {
        public var kind: Kind
        /// The marked message's id (the room's stanza-id in a group chat).
        public var id: String
    }

    public static func marker(in message: Message) -> Marker? {
        // The furthest state wins if a client sends several.
        for kind in Kind.allCases.reversed() {
            if let id = message.element.child(kind.rawValue, namespace: Namespace.chatMarkers)?[attribute: "id"], !id.isEmpty {
                return Marker(kind: kind, id: id)
            }
        }
        return nil
    }

    public static var markable: Element { Element("markable", namespace: Namespace.chatMarkers) }

    /// A message that tells `to` (and, by carbons, the user's other clients) that everything up to `id` was seen.
    public static func displayed(to: JID, id: String, type: Message.Kind = .chat) -> Message {
        var message = Message(to: to, type: type)
        message.element.append(Element("displayed", namespace: Namespace.chatMarkers, attributes: [("id", id)]))
        message.element.append(Element("store", namespace: Namespace.hints))
        return message
    }
}
