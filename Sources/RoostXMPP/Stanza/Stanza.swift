import Foundation

/// What every stanza kind shares: the element and its routing attributes.
public protocol Stanza: Sendable {
    var element: Element { get set }
}

extension Stanza {
    public var from: JID? {
        get { JID(parsing: element[attribute: "from"]) }
        set { element[attribute: "from"] = newValue?.description }
    }
    public var to: JID? {
        get { JID(parsing: element[attribute: "to"]) }
        set { element[attribute: "to"] = newValue?.description }
    }
    public var id: String? {
        get { element[attribute: "id"] }
        set { element[attribute: "id"] = newValue }
    }
    public var rawType: String? { element[attribute: "type"] }
    public var error: StanzaError? { rawType == "error" ? StanzaError(stanza: element) : nil }
    /// The raw `from` attribute, for checks that must distinguish "absent" from "unparseable".
    public var fromAttribute: String? { element[attribute: "from"] }
}

/// Unique ids for outgoing stanzas; random so that ids from different sessions never collide.
public enum StanzaID {
    public static func make() -> String {
        UUID().uuidString.lowercased()
    }
}
