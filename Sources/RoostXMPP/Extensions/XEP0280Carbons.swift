/// XEP-0280 Message Carbons: copies of the account's own traffic on other resources.
public enum Carbons {
    public enum Direction: String, Sendable { case received, sent }

    public static func enableRequest() -> IQ {
        IQ(type: .set, payload: Element("enable", namespace: Namespace.carbons))
    }

    /// Unwraps a carbon, accepting it only when it can be genuine (XEP-0280 §11, CVE-2017-5589 class):
    /// the wrapper comes from the account's own bare JID (or has no `from`, which the server means as the
    /// account), it is not a groupchat message, and it holds `<forwarded>` with exactly one inner message.
    /// Returns nil for anything else so the caller can treat it as an ordinary (or forged) message. `stamp` is the
    /// time in the `<forwarded/>` wrapper the server made, if it wrote one (UTC milliseconds); a `<delay/>` inside
    /// the inner message is the sender's and stays there.
    public static func unwrap(_ message: Message, account: JID) -> (direction: Direction, inner: Message, stamp: Int64?)? {
        guard let wrapper = message.element.child("received", namespace: Namespace.carbons).map({ (Direction.received, $0) })
            ?? message.element.child("sent", namespace: Namespace.carbons).map({ (Direction.sent, $0) }) else { return nil }
        return validated(message, wrapper: wrapper, account: account)
    }

    /// True when the element claims to be a carbon at all, valid or not (so forgeries can be logged and dropped).
    public static func claimsToBeCarbon(_ message: Message) -> Bool {
        message.element.child("received", namespace: Namespace.carbons) != nil
            || message.element.child("sent", namespace: Namespace.carbons) != nil
    }

    private static func validated(_ message: Message, wrapper: (Direction, Element), account: JID) -> (direction: Direction, inner: Message, stamp: Int64?)? {
        if let from = message.fromAttribute {
            guard let jid = JID(parsing: from), jid == account.bare else { return nil }
        }
        guard message.type != .groupchat,
              let forwarded = wrapper.1.child("forwarded", namespace: Namespace.forward) else { return nil }
        let inner = forwarded.children("message", namespace: Namespace.client)
        guard inner.count == 1 else { return nil }
        return (wrapper.0, Message(inner[0]), Delay.milliseconds(of: forwarded))
    }
}

extension Carbons {
    public static let module = ClientModule(name: "XEP-0280 Message Carbons", features: [Namespace.carbons])
}
