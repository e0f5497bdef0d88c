/// XEP-0066 Out of Band Data: the URL of a file shared in a message (HTTP upload links use it).
public enum OutOfBandData {
    public static func urls(in message: Message) -> [String] {
        message.element.children("x", namespace: Namespace.oob).compactMap { $0.child("url", namespace: Namespace.oob)?.text }
            .filter { !$0.isEmpty }
    }

    /// `<x xmlns='jabber:x:oob'><url>…</url></x>`, as Conversations, Dino and Gajim expect beside an upload link.
    public static func element(url: String, description: String? = nil) -> Element {
        var x = Element("x", namespace: Namespace.oob)
        x.append(Element("url", namespace: Namespace.oob, text: url))
        if let description { x.append(Element("desc", namespace: Namespace.oob, text: description)) }
        return x
    }
}
