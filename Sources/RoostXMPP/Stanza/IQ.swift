/// An `<iq/>` stanza (RFC 6120 §8.2.3): a request (`get`/`set`) or its answer (`result`/`error`).
public struct IQ: Stanza, Equatable {
    public enum Kind: String, Sendable { case get, set, result, error }

    public var element: Element

    public init(_ element: Element) { self.element = element }

    public init(type: Kind, to: JID? = nil, id: String = StanzaID.make(), payload: Element? = nil) {
        element = Element("iq", namespace: Namespace.client, attributes: [("type", type.rawValue), ("id", id)])
        if let to { element[attribute: "to"] = to.description }
        if let payload { element.append(payload) }
    }

    public var type: Kind? { rawType.flatMap(Kind.init(rawValue:)) }

    /// The single child of a get/set, or the optional child of a result.
    public var payload: Element? { element.childElements.first { $0.name != "error" } }

    public var isRequest: Bool { type == .get || type == .set }

    /// The answer to this request; the server routes it back by id.
    public func result(payload: Element? = nil) -> IQ {
        var answer = IQ(type: .result, to: from, id: id ?? "", payload: payload)
        answer.element[attribute: "id"] = id
        return answer
    }

    public func errorReply(_ error: StanzaError) -> IQ {
        var answer = IQ(type: .error, to: from, id: id ?? "")
        if let payload { answer.element.append(payload) }
        answer.element.append(error.element)
        return answer
    }
}
