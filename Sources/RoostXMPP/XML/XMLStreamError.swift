/// Why an XMPP stream could not be parsed. Every case is fatal for the stream: the caller sends the
/// stream error named by `streamErrorCondition` and closes the connection.
public enum XMLStreamError: Error, Equatable, CustomStringConvertible {
    /// The peer used XML that RFC 6120 §11.1 forbids: a DTD, an entity declaration, a processing
    /// instruction or a comment.
    case restrictedXML(String)
    /// The bytes are not well-formed XML; the message is expat's, with line and column.
    case notWellFormed(String)
    /// One stanza (or the stream header) grew beyond the configured byte limit.
    case stanzaTooLarge(limit: Int)
    /// Elements inside one stanza were nested deeper than the configured limit.
    case tooDeep(limit: Int)
    /// The stream is not valid UTF-8, or its XML declaration names another encoding.
    case invalidUTF8

    /// The RFC 6120 §4.9.3 defined condition to send in the `<stream:error/>`.
    public var streamErrorCondition: String {
        switch self {
        case .restrictedXML: "restricted-xml"
        case .notWellFormed: "not-well-formed"
        case .stanzaTooLarge, .tooDeep: "policy-violation"
        // §4.9.3.22 names violations of the UTF-8 rules as unsupported-encoding.
        case .invalidUTF8: "unsupported-encoding"
        }
    }

    public var description: String {
        switch self {
        case .restrictedXML(let what):
            "The peer sent XML that XMPP forbids (\(what)); the stream was closed."
        case .notWellFormed(let detail):
            "The peer sent XML that is not well-formed (\(detail)); the stream was closed."
        case .stanzaTooLarge(let limit):
            "The peer sent a stanza larger than \(limit) bytes; the stream was closed. Raise maxStanzaBytes if such stanzas are legitimate."
        case .tooDeep(let limit):
            "The peer sent a stanza nested deeper than \(limit) elements; the stream was closed. Raise maxDepth if such stanzas are legitimate."
        case .invalidUTF8:
            "The peer sent bytes that are not valid UTF-8, which XMPP requires; the stream was closed."
        }
    }
}
