/// XEP-0359 Unique and Stable Stanza IDs.
public struct StanzaIDs: Sendable, Equatable {
    /// `<stanza-id id by/>` elements, each assigned by the entity in `by` (only the account's own server
    /// archive or a MUC service can be trusted, and only where it advertises `urn:xmpp:sid:0` or MAM).
    public var stanzaIDs: [(id: String, by: JID)]
    public var originID: String?

    public init(_ element: Element) {
        stanzaIDs = element.children("stanza-id", namespace: Namespace.stanzaID).compactMap { e in
            guard let id = e[attribute: "id"], !id.isEmpty, let by = JID(parsing: e[attribute: "by"]) else { return nil }
            return (id, by)
        }
        originID = element.child("origin-id", namespace: Namespace.stanzaID)?[attribute: "id"]
    }

    /// The id assigned by `by`, if exactly one such element exists (two from the same entity are a forgery sign).
    public func id(by entity: JID) -> String? {
        let matches = stanzaIDs.filter { $0.by == entity }
        return matches.count == 1 ? matches[0].id : nil
    }

    public static func == (lhs: StanzaIDs, rhs: StanzaIDs) -> Bool {
        lhs.originID == rhs.originID && lhs.stanzaIDs.map(\.id) == rhs.stanzaIDs.map(\.id) && lhs.stanzaIDs.map(\.by) == rhs.stanzaIDs.map(\.by)
    }

    public static func originIDElement(_ id: String) -> Element {
        Element("origin-id", namespace: Namespace.stanzaID, attributes: [("id", id)])
    }
}

extension Message {
    public var stanzaIDs: StanzaIDs { StanzaIDs(element) }
}
