/// XEP-0085 Chat State Notifications: whether the other side is typing, paused, or gone.
public enum ChatState: String, Sendable, CaseIterable, Codable {
    case active, composing, paused, inactive, gone

    public static let namespace = Namespace.chatStates

    public var element: Element { Element(rawValue, namespace: Self.namespace) }
}

extension Message {
    /// The chat state carried by this message, standalone or alongside a body.
    public var chatState: ChatState? {
        guard let e = element.child(inNamespace: ChatState.namespace) else { return nil }
        return ChatState(rawValue: e.name)
    }

    public mutating func setChatState(_ state: ChatState) {
        element.children.removeAll { if case .element(let e) = $0 { e.namespace == ChatState.namespace } else { false } }
        element.append(state.element)
    }
}

extension ChatState {
    public static let module = ClientModule(name: "XEP-0085 Chat State Notifications", features: [namespace])
}
