import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import RoostXMPP

/// `roost-bench xml [--messages N]`: feeds a stream of N chat messages (4 KiB chunks, as from a socket) to
/// Roost's XMLStreamParser (expat) and, as the baseline in the same run, the same bytes to Foundation's
/// XMLParser (libxml2 SAX, no element tree); prints stanzas/s of each and the ratio.
enum XMLBench {
    static func run(_ arguments: [String]) throws {
        var messages = 100_000
        var index = 0
        while index < arguments.count {
            switch arguments[index] {
            case "--messages": index += 1; messages = Int(arguments[index]) ?? messages
            default: throw BenchUsage(text: "unknown option \(arguments[index]); options: --messages N")
            }
            index += 1
        }
        var text = "<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' version='1.0'>"
        for i in 0..<messages {
            text += "<message from='romeo@example.net/orchard' to='juliet@example.com' type='chat' id='m\(i)'>"
            text += "<body>Message number \(i): it is the east, and Juliet is the sun &amp; more.</body>"
            text += "<active xmlns='http://jabber.org/protocol/chatstates'/></message>\n"
        }
        let bytes = Array(text.utf8)

        let parser = XMLStreamParser()
        var stanzas = 0
        let roost = try seconds {
            var offset = 0
            while offset < bytes.count {
                let end = min(offset + 4096, bytes.count)
                stanzas += try parser.feed(Array(bytes[offset..<end])).count { if case .stanza = $0 { true } else { false } }
                offset = end
            }
        }
        guard stanzas == messages else { throw BenchUsage(text: "XMLStreamParser produced \(stanzas) stanzas, expected \(messages)") }

        let counter = MessageCounter()
        let foundation = try seconds {
            let baseline = XMLParser(data: Data(bytes + Array("</stream:stream>".utf8)))
            baseline.delegate = counter
            _ = baseline.parse()
        }
        print("roost-bench xml: \(messages) messages, \(bytes.count) bytes")
        print(String(format: "  XMLStreamParser (stanzas built)  %8.3f s  %9.0f stanzas/s", roost, Double(messages) / roost))
        print(String(format: "  Foundation XMLParser (SAX only)  %8.3f s  %9.0f messages/s (%d seen)", foundation, Double(messages) / foundation, counter.count))
        print(String(format: "  ratio (XMLStreamParser / XMLParser time): %.2f", roost / foundation))
    }

    private static func seconds(_ body: () throws -> Void) throws -> Double {
        let start = ContinuousClock.now
        try body()
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    private final class MessageCounter: NSObject, XMLParserDelegate {
        var count = 0
        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            if name == "message" { count += 1 }
        }
    }
}
