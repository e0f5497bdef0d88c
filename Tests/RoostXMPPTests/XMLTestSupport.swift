import RoostXMPP

enum XMLFixture {
    static let streams = "http://etherx.jabber.org/streams"
    static let client = "jabber:client"
    static let header =
        "<?xml version='1.0'?><stream:stream from='example.com' to='juliet@example.com' id='s1' version='1.0' xml:lang='en' xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'>"

    /// Feeds `text` in pieces of `chunk` bytes and collects every event.
    static func events(
        _ text: String, chunk: Int = .max, parser: XMLStreamParser = XMLStreamParser()
    ) throws(XMLStreamError) -> [XMLStreamParser.Event] {
        try events(Array(text.utf8), chunk: chunk, parser: parser)
    }

    static func events(
        _ bytes: [UInt8], chunk: Int = .max, parser: XMLStreamParser = XMLStreamParser()
    ) throws(XMLStreamError) -> [XMLStreamParser.Event] {
        var result: [XMLStreamParser.Event] = []
        var offset = 0
        while offset < bytes.count {
            let end = offset + min(chunk, bytes.count - offset)
            result += try parser.feed(Array(bytes[offset..<end]))
            offset = end
        }
        return result
    }

    /// The stanzas among the events of a stream that starts with `header`.
    static func stanzas(_ body: String, chunk: Int = .max) throws(XMLStreamError) -> [Element] {
        try events(header + body, chunk: chunk).compactMap { if case .stanza(let e) = $0 { e } else { nil } }
    }

    /// The error that feeding `text` raises, or nil when it parses.
    static func error(
        _ text: String, chunk: Int = .max, parser: XMLStreamParser = XMLStreamParser()
    ) -> XMLStreamError? {
        error(Array(text.utf8), chunk: chunk, parser: parser)
    }

    static func error(
        _ bytes: [UInt8], chunk: Int = .max, parser: XMLStreamParser = XMLStreamParser()
    ) -> XMLStreamError? {
        do {
            _ = try events(bytes, chunk: chunk, parser: parser)
            return nil
        } catch {
            return error
        }
    }
}
