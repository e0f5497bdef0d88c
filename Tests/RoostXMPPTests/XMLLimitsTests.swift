import Foundation
import Testing
import RoostXMPP

@Suite struct XMLLimitsTests {
    typealias F = XMLFixture

    @Test func aStanzaOverTheByteLimitIsRefused() {
        let text = F.header + "<message><body>" + String(repeating: "x", count: 300) + "</body></message>"
        for chunk in [1, 7, 64, Int.max] {
            #expect(F.error(text, chunk: chunk, parser: XMLStreamParser(maxStanzaBytes: 256)) == .stanzaTooLarge(limit: 256))
        }
    }

    @Test func aStartTagThatNeverEndsIsRefused() throws {
        let parser = XMLStreamParser(maxStanzaBytes: 1000)
        _ = try parser.feed(Array(F.header.utf8))
        _ = try parser.feed(Array("<message to='".utf8))
        let error = F.error(String(repeating: "a", count: 2000), chunk: 100, parser: parser)
        #expect(error == .stanzaTooLarge(limit: 1000))
    }

    @Test func aHugeSingleFeedIsRefused() throws {
        let parser = XMLStreamParser(maxStanzaBytes: 1 << 16)
        _ = try parser.feed(Array(F.header.utf8))
        let huge = "<message><body>" + String(repeating: "y", count: 1 << 20) + "</body></message>"
        #expect(F.error(huge, parser: parser) == .stanzaTooLarge(limit: 1 << 16))
    }

    @Test func manySmallStanzasAndKeepalivesStayUnderTheLimit() throws {
        let parser = XMLStreamParser(maxStanzaBytes: 100)
        _ = try parser.feed(Array(F.header.utf8))
        var count = 0
        for _ in 0..<100 {
            count += try parser.feed(Array("<presence/>   ".utf8)).count
            _ = try parser.feed(Array(String(repeating: " ", count: 60).utf8))
        }
        #expect(count == 100)
    }

    /// The stream header is held to the same limit, so the stanza here is made longer than it.
    @Test func aStanzaExactlyAtTheLimitIsAccepted() throws {
        let stanza = "<message><body>" + String(repeating: "z", count: 500) + "</body></message>"
        let parser = XMLStreamParser(maxStanzaBytes: stanza.utf8.count)
        for chunk in [1, 5, Int.max] {
            let events = try F.events(F.header + stanza, chunk: chunk, parser: parser)
            #expect(events.count == 2)
            parser.reset()
        }
        let tooLong = stanza.replacingOccurrences(of: "<body>", with: "<body>!")
        #expect(F.error(F.header + tooLong, parser: parser) == .stanzaTooLarge(limit: stanza.utf8.count))
    }

    @Test func nestingIsLimitedWithinEachStanza() throws {
        let ok = F.header + "<message><a><b/></a></message>"
        #expect(try F.events(ok, parser: XMLStreamParser(maxDepth: 3)).count == 2)
        let deep = F.header + "<message><a><b><c/></b></a></message>"
        #expect(F.error(deep, parser: XMLStreamParser(maxDepth: 3)) == .tooDeep(limit: 3))
        let bomb = F.header + String(repeating: "<a>", count: 100_000)
        #expect(F.error(bomb, chunk: 4096) == .tooDeep(limit: 64))
    }

    @Test func invalidUTF8IsAnErrorWherever() {
        let header = Array(F.header.utf8)
        let cases: [[UInt8]] = [
            Array("<message><body>bad ".utf8) + [0xFF] + Array("</body></message>".utf8),
            Array("<message to='a".utf8) + [0xC3, 0x28] + Array("'/>".utf8),
            Array("<message><body>".utf8) + [0xED, 0xA0, 0x80] + Array("</body></message>".utf8),  // surrogate
            Array("<message><body>".utf8) + [0xC0, 0x80] + Array("</body></message>".utf8),  // overlong NUL
            Array("<message><body>".utf8) + [0xF0, 0x9F, 0x98, 0x41] + Array("</body></message>".utf8),
            Array("<message><body>".utf8) + [0x80] + Array("</body></message>".utf8),
            Array("<mess".utf8) + [0xFE] + Array("age/>".utf8),
        ]
        for bytes in cases {
            for chunk in [1, 2, 3, Int.max] {
                #expect(F.error(header + bytes, chunk: chunk) == .invalidUTF8, "chunk \(chunk): \(bytes)")
            }
        }
    }

    @Test func validMultibyteTextSplitAnywhereParses() throws {
        let text = "中文 😀 é"
        for chunk in 1...4 {
            let message = try #require(try F.stanzas("<message><body>\(text)</body></message>", chunk: chunk).first)
            #expect(message.child("body")?.text == text)
        }
    }

    @Test func nulAndOtherNonXMLCharactersAreNotWellFormed() {
        let header = Array(F.header.utf8)
        for bad: [UInt8] in [[0x00], [0x01], [0xEF, 0xBF, 0xBF]] {
            let bytes = header + Array("<message><body>a".utf8) + bad + Array("</body></message>".utf8)
            #expect(F.error(bytes)?.streamErrorCondition == "not-well-formed", "\(bad)")
            #expect(F.error(bytes, chunk: 1)?.streamErrorCondition == "not-well-formed", "\(bad)")
        }
    }

    /// Expat switches to UTF-16 on a NUL or a UTF-16 byte order mark among the first two bytes, even when told
    /// UTF-8: such a stream fails however it is cut (once it parsed whole and failed in pieces).
    @Test func aStreamThatLooksLikeUTF16IsNeverReadAsUTF16() {
        let cases: [[UInt8]] = [
            [0x27, 0x00, 0x6E, 0x78, 0x3A, 0x41],  // the xml fuzz target's find
            Array("<stream:stream/>".utf8).flatMap { [$0, 0x00] },  // UTF-16LE
            Array("<stream:stream/>".utf8).flatMap { [0x00, $0] },  // UTF-16BE
            [0xFF, 0xFE] + Array("<stream:stream/>".utf8).flatMap { [$0, 0x00] },
            [0xFE, 0xFF, 0x4E, 0x2D, 0x65, 0x87],  // a BOM and text without a NUL
        ]
        for bytes in cases {
            for chunk in [1, 2, 3, Int.max] {
                let error = F.error(bytes, chunk: chunk)
                #expect(error == .invalidUTF8 || error?.streamErrorCondition == "not-well-formed", "chunk \(chunk): \(bytes): \(String(describing: error))")
            }
        }
    }

    @Test func declaringAnotherEncodingIsRefused() {
        #expect(F.error("<?xml version='1.0' encoding='ISO-8859-1'?><stream/>") == .invalidUTF8)
    }
}
