/// XEP-0334 Message Processing Hints that Roost sets on what it sends or honours on what it archives.
public enum ProcessingHint: String, Sendable {
    case noPermanentStore = "no-permanent-store"
    case noStore = "no-store"
    case noCopy = "no-copy"
    case store

    public var element: Element { Element(rawValue, namespace: Namespace.hints) }
}

extension Message {
    public func hasHint(_ hint: ProcessingHint) -> Bool {
        element.child(hint.rawValue, namespace: Namespace.hints) != nil
    }
}
