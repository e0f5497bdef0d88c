/// A stanza-level error (RFC 6120 §8.3): the condition, its type and the server's optional text.
public struct StanzaError: Error, Sendable, Equatable, CustomStringConvertible {
    public var type: String
    public var condition: String
    public var text: String?
    /// An application-specific condition beside the defined one (e.g. XEP-0363 `<file-too-large/>`).
    public var applicationCondition: Element?

    public init(type: String, condition: String, text: String? = nil, applicationCondition: Element? = nil) {
        self.type = type
        self.condition = condition
        self.text = text
        self.applicationCondition = applicationCondition
    }

    /// Reads the `<error/>` child of an error stanza; nil when there is none.
    public init?(stanza: Element) {
        guard let error = stanza.child("error", namespace: stanza.namespace ?? Namespace.client)
            ?? stanza.childElements.first(where: { $0.name == "error" }) else { return nil }
        type = error[attribute: "type"] ?? "cancel"
        let conditionElement = error.childElements.first { $0.namespace == Namespace.stanzaErrors && $0.name != "text" }
        condition = conditionElement?.name ?? "undefined-condition"
        let t = error.child("text", namespace: Namespace.stanzaErrors)?.text
        text = (t?.isEmpty ?? true) ? nil : t
        applicationCondition = error.childElements.first { $0.namespace != Namespace.stanzaErrors }
    }

    public var element: Element {
        var e = Element("error", namespace: Namespace.client, attributes: [("type", type)])
        e.append(Element(condition, namespace: Namespace.stanzaErrors))
        if let text { e.append(Element("text", namespace: Namespace.stanzaErrors, text: text)) }
        if let applicationCondition { e.append(applicationCondition) }
        return e
    }

    public var description: String {
        if let text { return "\(condition) (\(type)): \(text)" }
        return "\(condition) (\(type))"
    }
}
