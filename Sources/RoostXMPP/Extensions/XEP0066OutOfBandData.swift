/// XEP-0066 Out of Band Data: the URL of a file shared in a message (HTTP upload links use it).
public enum OutOfBandData {
    public static func urls(in message: Message) -> [String] {
        message.element.children("x", namespace: Namespace.oob).compactMap { $0.child("url", namespace: Namespace.oob)?.text }
            .filter { !$0.isEmpty }
    }
}
