import Foundation

/// A `<presence/>` stanza (RFC 6121 §4): availability or a subscription request/answer.
public struct Presence: Stanza, Equatable {
    public enum Kind: String, Sendable {
        case available, unavailable, subscribe, subscribed, unsubscribe, unsubscribed, probe, error
    }

    public enum Show: String, Sendable, CaseIterable { case away, chat, dnd, xa }

    public var element: Element

    public init(_ element: Element) { self.element = element }

    public init(type: Kind = .available, to: JID? = nil, show: Show? = nil, status: String? = nil, priority: Int? = nil) {
        element = Element("presence", namespace: Namespace.client)
        if type != .available { element[attribute: "type"] = type.rawValue }
        if let to { element[attribute: "to"] = to.description }
        if let show { element.append(Element("show", namespace: Namespace.client, text: show.rawValue)) }
        if let status { element.append(Element("status", namespace: Namespace.client, text: status)) }
        if let priority { element.append(Element("priority", namespace: Namespace.client, text: String(priority))) }
    }

    /// No type attribute means available (RFC 6121 §4.7.1).
    public var type: Kind {
        guard let raw = rawType else { return .available }
        return Kind(rawValue: raw) ?? .error
    }

    public var show: Show? { element.child("show", namespace: Namespace.client).flatMap { Show(rawValue: $0.text) } }
    public var status: String? { element.child("status", namespace: Namespace.client)?.text }

    /// RFC 6121 §4.7.2.3: an integer from -128 to 127; absent or invalid means 0.
    public var priority: Int {
        guard let text = element.child("priority", namespace: Namespace.client)?.text,
              let value = Int(text.trimmingCharacters(in: .whitespaces)), (-128...127).contains(value) else { return 0 }
        return value
    }

    public mutating func add(_ child: Element) { element.append(child) }
}
