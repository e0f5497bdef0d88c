import Foundation
import Testing
import RoostXMPP

@Suite struct XMLThroughputTests {
    /// A self-check, not a benchmark: prints the rate so regressions are visible in test logs.
    @Test func tenThousandMessages() throws {
        var text = XMLFixture.header
        for i in 0..<10_000 {
            text += "<message from='romeo@example.net/orchard' to='juliet@example.com' type='chat' id='m\(i)'>"
            text += "<body>Message number \(i): it is the east, and Juliet is the sun &amp; more.</body>"
            text += "<active xmlns='http://jabber.org/protocol/chatstates'/></message>\n"
        }
        let bytes = Array(text.utf8)
        let parser = XMLStreamParser()
        let start = ContinuousClock.now
        var stanzas = 0
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + 4096, bytes.count)
            stanzas += try parser.feed(Array(bytes[offset..<end])).count { if case .stanza = $0 { true } else { false } }
            offset = end
        }
        let elapsed = ContinuousClock.now - start
        #expect(stanzas == 10_000)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print("XMLStreamParser: 10000 messages, \(bytes.count) bytes in \(elapsed) (\(Int(Double(stanzas) / seconds)) stanzas/s)")
    }
}
