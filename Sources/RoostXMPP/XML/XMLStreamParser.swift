internal import CExpat

/// Incremental parser for one XMPP XML stream (RFC 6120 §4, §11): bytes go in as they arrive from
/// the network, and the stream header, each complete top-level stanza and the stream's end come out.
///
/// Not `Sendable`: one connection owns it and feeds it from one thread.
public final class XMLStreamParser {
    public enum Event: Sendable, Equatable {
        /// The `<stream:stream>` root with its attributes (`from`, `to`, `id`, `version`, `xml:lang`)
        /// and no children. Its name and namespace are reported as sent; the negotiator checks them.
        case streamStart(Element)
        /// One complete child of the stream root: a stanza, `stream:features`, `stream:error`, …
        case stanza(Element)
        /// The peer closed the stream with `</stream:stream>`.
        case streamEnd
    }

    public let maxStanzaBytes: Int
    public let maxDepth: Int

    /// Input is handed to expat in slices so that a token that never ends (a huge attribute, say)
    /// is caught by the size check after at most this many bytes beyond the limit.
    private static let sliceSize = 64 * 1024

    private var expat: ExpatHandle
    private var assembler = ElementAssembler()
    private var completed: [Event] = []
    /// Set inside an expat callback, which must not throw across C; `feed` turns it into a throw.
    private var pendingFailure: XMLStreamError?
    /// Once set, every `feed` throws it again until `reset()`.
    private var failure: XMLStreamError?
    /// 0 before the root, 1 directly inside `<stream:stream>`, 2 inside a stanza, and so on.
    private var depth = 0
    /// Stream byte offset where the current stanza's start tag began.
    private var stanzaStart = 0
    /// Stream byte offset after the last complete unit (header, stanza, keepalive whitespace):
    /// everything fed beyond it belongs to a unit still being received.
    private var unitStart = 0
    private var bytesFed = 0
    /// The last bytes of the previous slice: expat may report an invalid UTF-8 sequence that began
    /// there, and the error is classified by looking at those bytes.
    private var recentBytes: [UInt8] = []

    public init(maxStanzaBytes: Int = 1 << 20, maxDepth: Int = 64) {
        self.maxStanzaBytes = maxStanzaBytes
        self.maxDepth = maxDepth
        expat = ExpatHandle()
        installHandlers(on: expat.parser)
    }

    /// Feeds raw bytes from the network; returns the events completed by them, in order.
    ///
    /// On error nothing is returned, not even events completed earlier in the same bytes: the
    /// stream is dead and the caller's only move is to send the stream error and close.
    public func feed(_ bytes: [UInt8]) throws(XMLStreamError) -> [Event] {
        if let failure { throw failure }
        let error = bytes.withUnsafeBufferPointer { buffer -> XMLStreamError? in
            var offset = 0
            while offset < buffer.count {
                let slice = UnsafeBufferPointer(rebasing: buffer[offset..<min(offset + Self.sliceSize, buffer.count)])
                if let error = parse(slice) { return error }
                offset += slice.count
            }
            return nil
        }
        if let error {
            failure = error
            completed.removeAll()
            assembler.removeAll()
            throw error
        }
        let events = completed
        completed = []
        return events
    }

    /// Discards all state for a stream restart (after STARTTLS or SASL success). Called between
    /// feeds, never from inside one.
    public func reset() {
        expat = ExpatHandle()
        installHandlers(on: expat.parser)
        assembler.removeAll()
        completed.removeAll()
        pendingFailure = nil
        failure = nil
        depth = 0
        stanzaStart = 0
        unitStart = 0
        bytesFed = 0
        recentBytes.removeAll()
    }

    private func parse(_ slice: UnsafeBufferPointer<UInt8>) -> XMLStreamError? {
        guard let base = slice.baseAddress else { return nil }
        let sliceStart = bytesFed
        // Bytes that never occur in UTF-8 XML, refused before expat sees them: NUL (no XML character), 0xFE
        // and 0xFF (no UTF-8 byte). Expat, even told UTF-8, switches to UTF-16 when a stream's first two bytes
        // hold a NUL or a UTF-16 byte order mark, so the same bytes would read differently depending on how the
        // network cut them (found by the `xml` fuzz target).
        if let bad = slice.firstIndex(where: { $0 == 0x00 || $0 >= 0xFE }) {
            return slice[bad] == 0x00 ? .notWellFormed("a NUL byte at offset \(sliceStart + bad), which XML never allows") : .invalidUTF8
        }
        let status = base.withMemoryRebound(to: CChar.self, capacity: slice.count) {
            XML_Parse(expat.parser, $0, Int32(slice.count), 0)
        }
        bytesFed += slice.count
        if let pendingFailure { return pendingFailure }
        if status == XML_STATUS_ERROR { return expatError(slice: slice, sliceStart: sliceStart) }
        if bytesFed - unitStart > maxStanzaBytes { return .stanzaTooLarge(limit: maxStanzaBytes) }
        recentBytes = Array((recentBytes + slice.suffix(3)).suffix(3))
        return nil
    }

    private func expatError(slice: UnsafeBufferPointer<UInt8>, sliceStart: Int) -> XMLStreamError {
        let parser = expat.parser
        let code = XML_GetErrorCode(parser)
        if code == XML_ERROR_INVALID_TOKEN || code == XML_ERROR_PARTIAL_CHAR,
            isInvalidUTF8(at: XML_GetCurrentByteIndex(parser), slice: slice, sliceStart: sliceStart)
        {
            return .invalidUTF8
        }
        let message = XML_ErrorString(code).map { String(cString: $0) } ?? "error \(code.rawValue)"
        return .notWellFormed("\(message) at \(position)")
    }

    /// Expat reports bad UTF-8 and other bad characters (NUL, U+FFFF) alike as an invalid token at
    /// the offending byte; only the bytes there tell which RFC 6120 condition applies.
    private func isInvalidUTF8(at index: Int, slice: UnsafeBufferPointer<UInt8>, sliceStart: Int) -> Bool {
        let window = recentBytes + slice.prefix(4)
        let windowStart = sliceStart - recentBytes.count
        let bytes: ArraySlice<UInt8>
        if index >= windowStart && index < windowStart + window.count {
            bytes = window[(index - windowStart)...]
        } else if index >= sliceStart && index < sliceStart + slice.count {
            let offset = index - sliceStart
            bytes = ArraySlice(slice[offset..<min(offset + 4, slice.count)])
        } else {
            return false
        }
        guard let first = bytes.first, first >= 0x80 else { return false }
        var iterator = bytes.makeIterator()
        var decoder = Unicode.UTF8()
        if case .scalarValue = decoder.decode(&iterator) { return false }
        return true
    }

    private var position: String {
        "line \(XML_GetCurrentLineNumber(expat.parser)), column \(XML_GetCurrentColumnNumber(expat.parser) + 1)"
    }

    /// Records why parsing must end and makes expat return at once; callbacks that expat still
    /// delivers afterwards are ignored.
    private func fail(_ error: XMLStreamError) {
        if pendingFailure == nil { pendingFailure = error }
        XML_StopParser(expat.parser, 0)
    }

    /// Offset just past the event expat is currently reporting.
    private var endOfCurrentEvent: Int {
        XML_GetCurrentByteIndex(expat.parser) + Int(XML_GetCurrentByteCount(expat.parser))
    }

    private func stanzaExceedsLimit() -> Bool {
        endOfCurrentEvent - stanzaStart > maxStanzaBytes
    }

    // MARK: Events from expat

    func didStartElement(_ name: UnsafePointer<CChar>, _ attributes: UnsafeMutablePointer<UnsafePointer<CChar>?>?) {
        guard pendingFailure == nil else { return }
        depth += 1
        if depth == 2 { stanzaStart = XML_GetCurrentByteIndex(expat.parser) }
        if depth - 1 > maxDepth { return fail(.tooDeep(limit: maxDepth)) }
        if depth >= 2 && stanzaExceedsLimit() { return fail(.stanzaTooLarge(limit: maxStanzaBytes)) }
        let element = makeElement(name, attributes)
        if depth == 1 {
            completed.append(.streamStart(element))
            unitStart = endOfCurrentEvent
        } else {
            assembler.start(element)
        }
    }

    func didEndElement() {
        guard pendingFailure == nil else { return }
        defer { depth -= 1 }
        if depth == 1 {
            completed.append(.streamEnd)
            unitStart = endOfCurrentEvent
            return
        }
        if stanzaExceedsLimit() { return fail(.stanzaTooLarge(limit: maxStanzaBytes)) }
        if let stanza = assembler.end() {
            completed.append(.stanza(stanza))
            unitStart = endOfCurrentEvent
        }
    }

    func didReceiveText(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard pendingFailure == nil else { return }
        if depth >= 2 {
            if stanzaExceedsLimit() { return fail(.stanzaTooLarge(limit: maxStanzaBytes)) }
            assembler.append(text: bytes)
        } else {
            // Whitespace keepalives between stanzas: no event, but they complete no unit either,
            // so the size budget starts again after them.
            unitStart = endOfCurrentEvent
        }
    }

    func didDeclareXML(encoding: UnsafePointer<CChar>?) {
        guard pendingFailure == nil, let encoding else { return }
        if String(cString: encoding).lowercased() != "utf-8" { fail(.invalidUTF8) }
    }

    func refuse(_ construct: String) {
        guard pendingFailure == nil else { return }
        fail(.restrictedXML("\(construct) at \(position)"))
    }

    private func makeElement(_ name: UnsafePointer<CChar>, _ attributes: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Element {
        let expanded = ExpandedName(name)
        var pairs: [Element.Attribute] = []
        if let attributes {
            var index = 0
            while let attributeName = attributes[index], let value = attributes[index + 1] {
                let attribute = ExpandedName(attributeName)
                // A prefixed attribute keeps its prefix; the prefix's declaration is kept beside it (expat consumes
                // declarations), so the element serializes to XML that parses again (found by the xml fuzz target).
                if let prefix = attribute.prefix, let namespace = attribute.namespace, prefix != "xml",
                   !pairs.contains(where: { $0.name == "xmlns:" + prefix }) {
                    pairs.append(Element.Attribute(name: "xmlns:" + prefix, value: namespace))
                }
                pairs.append(Element.Attribute(name: attribute.qualified, value: String(cString: value)))
                index += 2
            }
        }
        return Element(expanded.local, namespace: expanded.namespace, attributeList: pairs)
    }
}

extension Element {
    /// Parses one serialized element (a stanza kept in the archive, say) whose default namespace is
    /// `jabber:client`; nil when it is not exactly one well-formed element.
    public init?(parsing xml: String) {
        let parser = XMLStreamParser(maxStanzaBytes: max(1 << 20, xml.utf8.count + 64))
        guard let events = try? parser.feed(Array("<wrapper xmlns='\(Namespace.client)'>\(xml)</wrapper>".utf8)) else { return nil }
        let stanzas = events.compactMap { event -> Element? in if case .stanza(let e) = event { e } else { nil } }
        guard stanzas.count == 1 else { return nil }
        self = stanzas[0]
    }
}
