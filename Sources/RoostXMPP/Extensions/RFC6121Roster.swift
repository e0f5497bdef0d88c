/// RFC 6121 §2 roster management: the contact list the server keeps for the account.
public struct RosterItem: Sendable, Equatable, Codable {
    public enum Subscription: String, Sendable, Codable { case none, to, from, both, remove }

    public var jid: JID
    public var name: String?
    public var subscription: Subscription
    /// True when the account has asked the contact for a subscription not yet answered (`ask='subscribe'`).
    public var askPending: Bool
    public var groups: [String]

    public init(jid: JID, name: String? = nil, subscription: Subscription = .none, askPending: Bool = false, groups: [String] = []) {
        self.jid = jid
        self.name = name
        self.subscription = subscription
        self.askPending = askPending
        self.groups = groups
    }

    public init?(_ element: Element) {
        guard element.name == "item", let jid = JID(parsing: element[attribute: "jid"]) else { return nil }
        self.jid = jid.bare
        let name = element[attribute: "name"]
        self.name = (name?.isEmpty ?? true) ? nil : name
        subscription = Subscription(rawValue: element[attribute: "subscription"] ?? "none") ?? .none
        askPending = element[attribute: "ask"] == "subscribe"
        groups = element.children("group", namespace: Namespace.roster).map(\.text).filter { !$0.isEmpty }
    }

    public var element: Element {
        var e = Element("item", namespace: Namespace.roster, attributes: [("jid", jid.description)])
        if let name { e[attribute: "name"] = name }
        if subscription == .remove { e[attribute: "subscription"] = "remove" }
        for group in groups { e.append(Element("group", namespace: Namespace.roster, text: group)) }
        return e
    }
}

public enum Roster {
    public static func getRequest(version: String? = nil) -> IQ {
        var query = Element("query", namespace: Namespace.roster)
        if let version { query[attribute: "ver"] = version }
        return IQ(type: .get, payload: query)
    }

    public static func setRequest(_ item: RosterItem) -> IQ {
        IQ(type: .set, payload: Element("query", namespace: Namespace.roster, children: [.element(item.element)]))
    }

    public static func items(in iq: IQ) -> [RosterItem] {
        guard let query = iq.element.child("query", namespace: Namespace.roster) else { return [] }
        return query.children("item", namespace: Namespace.roster).compactMap(RosterItem.init)
    }

    public static func version(in iq: IQ) -> String? {
        iq.element.child("query", namespace: Namespace.roster)?[attribute: "ver"]
    }

    /// RFC 6121 §2.1.6: a push is legitimate only with no `from` or `from` = the account's bare JID,
    /// and carries exactly one item. Anything else is a spoofing attempt and is refused.
    public static func isLegitimatePush(_ iq: IQ, account: JID) -> Bool {
        guard iq.type == .set, let query = iq.element.child("query", namespace: Namespace.roster) else { return false }
        if let from = iq.fromAttribute {
            guard let jid = JID(parsing: from), jid == account.bare else { return false }
        }
        return query.children("item", namespace: Namespace.roster).count == 1
    }
}

extension Roster {
    /// Roster pushes (`set`) and any other request in the roster namespace go to the layer above, which checks
    /// them (`isLegitimatePush`), archives them and acknowledges them after the commit.
    static let module = ClientModule(name: "RFC 6121 roster pushes", features: [], handlers: [
        .request(namespace: Namespace.roster) { _, _ in .deliver },
    ])
}
