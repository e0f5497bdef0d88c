/// XEP-0308 Last Message Correction: a message that replaces an earlier one by its id.
extension Message {
    public var replacesID: String? {
        element.child("replace", namespace: Namespace.correction)?[attribute: "id"]
    }

    public mutating func setReplaces(_ id: String) {
        element.append(Element("replace", namespace: Namespace.correction, attributes: [("id", id)]))
    }
}

/// XEP-0308 as a client module: the layer above shows corrections.
public enum Correction {
    public static let module = ClientModule(name: "XEP-0308 Last Message Correction", features: [Namespace.correction])
}
