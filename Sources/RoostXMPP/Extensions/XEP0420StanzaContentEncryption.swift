public import Foundation

/// XEP-0420 Stanza Content Encryption: what OMEMO 2 encrypts is an `<envelope/>` holding the message's
/// content elements (here the `<body/>`) and affix elements: random padding (`rpad`), the sending time,
/// and the sender and recipient, which the receiver checks against the stanza so that an envelope cannot
/// be replayed into another conversation.
public enum StanzaContentEncryption {
    public static let namespace = "urn:xmpp:sce:1"

    public struct Envelope: Sendable, Equatable {
        /// The content elements (e.g. `<body xmlns='jabber:client'>`).
        public var content: [Element]
        public var from: JID?
        public var to: JID?
        public var time: Date?

        public init(content: [Element], from: JID?, to: JID?, time: Date?) {
            self.content = content
            self.from = from
            self.to = to
            self.time = time
        }

        public var body: String? {
            content.first { $0.name == "body" && ($0.namespace == Namespace.client || $0.namespace == nil) }?.text
        }
    }

    /// The envelope of `body`, padded with 0–199 random characters so its length does not give the text's away.
    public static func envelope(body: String, from: JID, to: JID, time: Date = Date()) -> [UInt8] {
        let padding = String((0..<Int.random(in: 0...199)).map { _ in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".randomElement()! })
        let envelope = Element("envelope", namespace: namespace, children: [
            .element(Element("content", namespace: namespace, children: [.element(Element("body", namespace: Namespace.client, text: body))])),
            .element(Element("rpad", namespace: namespace, text: padding)),
            .element(Element("time", namespace: namespace, attributes: [("stamp", XMPPDateTime.format(time))])),
            .element(Element("to", namespace: namespace, attributes: [("jid", to.bare.description)])),
            .element(Element("from", namespace: namespace, attributes: [("jid", from.bare.description)])),
        ])
        return Array(XMLSerializer.serialize(envelope).utf8)
    }

    /// Parses a decrypted envelope; nil when it is not one.
    public static func parse(_ bytes: [UInt8]) -> Envelope? {
        guard let element = Element(parsing: String(decoding: bytes, as: UTF8.self)),
              element.name == "envelope", element.namespace == namespace else { return nil }
        let content = element.child("content", namespace: namespace)?.childElements ?? []
        return Envelope(content: content,
                        from: element.child("from", namespace: namespace)?[attribute: "jid"].flatMap { JID(parsing: $0) },
                        to: element.child("to", namespace: namespace)?[attribute: "jid"].flatMap { JID(parsing: $0) },
                        time: element.child("time", namespace: namespace)?[attribute: "stamp"].flatMap { XMPPDateTime.parse($0) })
    }
}
