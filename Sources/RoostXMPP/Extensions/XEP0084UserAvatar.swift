public import Foundation

/// XEP-0084 User Avatar: avatars published over PEP. Contacts' metadata arrives as pubsub events
/// (Roost advertises `urn:xmpp:avatar:metadata+notify`); the image is fetched from the data node by id.
public enum UserAvatar {
    public struct Metadata: Sendable, Equatable {
        /// SHA-1 of the image, hex; nil when the contact removed its avatar.
        public var id: String?
        public var mimeType: String?
    }

    public static let notifyFeature = Namespace.avatarMetadata + "+notify"

    /// The avatar metadata in a pubsub event message, if that is what it carries.
    public static func metadata(in message: Message) -> Metadata? {
        guard let event = message.element.child("event", namespace: Namespace.pubsubEvent),
              let items = event.child("items", namespace: Namespace.pubsubEvent),
              items[attribute: "node"] == Namespace.avatarMetadata else { return nil }
        guard let item = items.child("item", namespace: Namespace.pubsubEvent),
              let metadata = item.child("metadata", namespace: Namespace.avatarMetadata) else { return Metadata(id: nil, mimeType: nil) }
        guard let info = metadata.child("info", namespace: Namespace.avatarMetadata) else { return Metadata(id: nil, mimeType: nil) }
        return Metadata(id: info[attribute: "id"] ?? item[attribute: "id"], mimeType: info[attribute: "type"])
    }

    public static func dataRequest(from contact: JID, id: String) -> IQ {
        var items = Element("items", namespace: Namespace.pubsub, attributes: [("node", Namespace.avatarData)])
        items.append(Element("item", namespace: Namespace.pubsub, attributes: [("id", id)]))
        return IQ(type: .get, to: contact.bare, payload: Element("pubsub", namespace: Namespace.pubsub, children: [.element(items)]))
    }

    public static func data(in iq: IQ) -> Data? {
        guard let text = iq.element.child("pubsub", namespace: Namespace.pubsub)?.child("items", namespace: Namespace.pubsub)?
            .child("item", namespace: Namespace.pubsub)?.child("data", namespace: Namespace.avatarData)?.text else { return nil }
        return Data(base64Encoded: text.filter { !$0.isWhitespace })
    }
}

extension UserAvatar {
    public static let module = ClientModule(name: "XEP-0084 User Avatar", features: [notifyFeature])
}
