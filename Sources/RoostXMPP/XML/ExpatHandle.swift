internal import CExpat

/// Owns one namespace-aware expat parser and frees it.
///
/// Names arrive as triplets `uri SEP local SEP prefix` so that prefixed attributes such as
/// `xml:lang` can be given back their qualified name.
final class ExpatHandle {
    /// U+0001 cannot occur in XML 1.0 names or namespace URIs, so it never collides with content.
    static let separator: UInt8 = 0x01

    let parser: XML_Parser

    init() {
        // Forcing UTF-8 makes expat ignore any other encoding declared by the peer: RFC 6120 §11.6
        // allows only UTF-8.
        guard let parser = XML_ParserCreateNS("UTF-8", CChar(bitPattern: Self.separator)) else {
            preconditionFailure("expat could not allocate a parser: the process is out of memory")
        }
        XML_SetReturnNSTriplet(parser, 1)
        self.parser = parser
    }

    deinit {
        XML_ParserFree(parser)
    }
}
