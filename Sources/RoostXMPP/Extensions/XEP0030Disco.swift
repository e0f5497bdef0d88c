/// XEP-0030 Service Discovery: what an entity is and which protocols it speaks.
public struct DiscoInfo: Sendable, Equatable {
    public struct Identity: Sendable, Equatable, Hashable {
        public var category: String
        public var type: String
        public var name: String?
        public var lang: String?

        public init(category: String, type: String, name: String? = nil, lang: String? = nil) {
            self.category = category
            self.type = type
            self.name = name
            self.lang = lang
        }
    }

    public var identities: [Identity]
    public var features: Set<String>
    /// Extended info forms (XEP-0128), kept raw.
    public var forms: [Element]

    public init(identities: [Identity], features: Set<String>, forms: [Element] = []) {
        self.identities = identities
        self.features = features
        self.forms = forms
    }

    public init(_ query: Element) {
        identities = query.children("identity", namespace: Namespace.discoInfo).map {
            Identity(category: $0[attribute: "category"] ?? "", type: $0[attribute: "type"] ?? "", name: $0[attribute: "name"], lang: $0[attribute: "xml:lang"])
        }
        features = Set(query.children("feature", namespace: Namespace.discoInfo).compactMap { $0[attribute: "var"] })
        forms = query.children("x", namespace: Namespace.dataForms)
    }

    public func element(node: String? = nil) -> Element {
        var query = Element("query", namespace: Namespace.discoInfo)
        if let node { query[attribute: "node"] = node }
        for identity in identities {
            var e = Element("identity", namespace: Namespace.discoInfo, attributes: [("category", identity.category), ("type", identity.type)])
            if let name = identity.name { e[attribute: "name"] = name }
            if let lang = identity.lang { e[attribute: "xml:lang"] = lang }
            query.append(e)
        }
        for feature in features.sorted() {
            query.append(Element("feature", namespace: Namespace.discoInfo, attributes: [("var", feature)]))
        }
        for form in forms { query.append(form) }
        return query
    }

    public func supports(_ feature: String) -> Bool { features.contains(feature) }
}

public enum Disco {
    public static func infoRequest(to: JID?, node: String? = nil) -> IQ {
        var query = Element("query", namespace: Namespace.discoInfo)
        if let node { query[attribute: "node"] = node }
        return IQ(type: .get, to: to, payload: query)
    }

    public static func itemsRequest(to: JID?) -> IQ {
        IQ(type: .get, to: to, payload: Element("query", namespace: Namespace.discoItems))
    }

    public static func items(in iq: IQ) -> [JID] {
        iq.element.child("query", namespace: Namespace.discoItems)?.children("item", namespace: Namespace.discoItems)
            .compactMap { JID(parsing: $0[attribute: "jid"]) } ?? []
    }

    public static func info(in iq: IQ) -> DiscoInfo? {
        iq.element.child("query", namespace: Namespace.discoInfo).map(DiscoInfo.init)
    }
}

extension Disco {
    /// Answers disco#info (`get`) with what the registered modules advertise (`XMPPClient.ownDiscoInfo`), for
    /// the node asked about (the entity caps node included: the same answer).
    static let module = ClientModule(name: "XEP-0030 Service Discovery", features: [Namespace.discoInfo], handlers: [
        .request(namespace: Namespace.discoInfo) { iq, client in
            guard iq.type == .get, let payload = iq.payload, payload.name == "query" else { return .unsupported }
            return .answer(iq.result(payload: client.ownDiscoInfo.element(node: payload[attribute: "node"])))
        },
    ])
}
