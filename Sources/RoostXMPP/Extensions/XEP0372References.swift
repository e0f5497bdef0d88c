/// XEP-0372 References: `<reference type='mention' uri='xmpp:…'/>` marks who a message mentions.
public enum References {
    /// The JIDs a message mentions (`xmpp:` URIs of `type='mention'` references).
    public static func mentions(in message: Message) -> [JID] {
        message.element.children("reference", namespace: Namespace.references).compactMap { reference in
            guard reference[attribute: "type"] == "mention", let uri = reference[attribute: "uri"], uri.hasPrefix("xmpp:") else { return nil }
            var address = Substring(uri.dropFirst(5))
            if let query = address.firstIndex(of: "?") { address = address[..<query] }
            return JID(parsing: String(address).removingPercentEncodingIfAny)
        }
    }
}

private extension String {
    /// `xmpp:` URIs percent-encode some characters (RFC 5122); a malformed escape leaves the text as it is.
    var removingPercentEncodingIfAny: String {
        guard contains("%") else { return self }
        var bytes: [UInt8] = []
        var iterator = utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%"), let high = iterator.next(), let low = iterator.next(),
               let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) {
                bytes.append(value)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
