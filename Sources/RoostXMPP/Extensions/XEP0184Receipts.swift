/// XEP-0184 Message Delivery Receipts: `<received id='…'/>` says the recipient's client got a message;
/// `<request/>` on a message asks for one.
public enum Receipts {
    /// The id of the message this receipt acknowledges.
    public static func receivedID(in message: Message) -> String? {
        guard let id = message.element.child("received", namespace: Namespace.receipts)?[attribute: "id"], !id.isEmpty else { return nil }
        return id
    }

    public static var request: Element { Element("request", namespace: Namespace.receipts) }
}

extension Receipts {
    public static let module = ClientModule(name: "XEP-0184 Message Delivery Receipts", features: [Namespace.receipts])
}
