/// A `<message/>` stanza (RFC 6120 §8.2.1, RFC 6121 §5).
public struct Message: Stanza, Equatable {
    public enum Kind: String, Sendable { case chat, normal, groupchat, headline, error }

    public var element: Element

    public init(_ element: Element) { self.element = element }

    public init(to: JID?, type: Kind = .chat, body: String? = nil, id: String? = StanzaID.make()) {
        element = Element("message", namespace: Namespace.client)
        element[attribute: "type"] = type.rawValue
        if let to { element[attribute: "to"] = to.description }
        if let id { element[attribute: "id"] = id }
        if let body { element.append(Element("body", namespace: Namespace.client, text: body)) }
    }

    /// RFC 6121 §5.2.2: a missing or unknown type means `normal`.
    public var type: Kind { Kind(rawValue: rawType ?? "normal") ?? .normal }

    /// The body without `xml:lang`, else the first one.
    public var body: String? {
        let bodies = element.children("body", namespace: Namespace.client)
        return (bodies.first { $0[attribute: "xml:lang"] == nil } ?? bodies.first)?.text
    }

    public var subject: String? { element.child("subject", namespace: Namespace.client)?.text }
    public var thread: String? { element.child("thread", namespace: Namespace.client)?.text }

    public mutating func setThread(_ thread: String) {
        element.children.removeAll { if case .element(let e) = $0 { e.name == "thread" } else { false } }
        element.append(Element("thread", namespace: Namespace.client, text: thread))
    }

    public mutating func setSubject(_ subject: String) {
        element.append(Element("subject", namespace: Namespace.client, text: subject))
    }

    public mutating func add(_ child: Element) { element.append(child) }
}
