import Testing
import RoostXMPP

@Suite struct XMLSerializerTests {
    typealias F = XMLFixture

    static let trickyText = [
        "a & b < c > d \" e ' f",
        "line one\r\nline two\rthree\n",
        "]]> <![CDATA[ &amp; &#13;",
        "emoji 😀👩‍👩‍👧 and 中文 and é",
        "  leading and trailing  ",
        "\ttab",
    ]

    /// Parses `element` as a stanza of a jabber:client stream.
    func reparse(_ element: Element) throws -> Element? {
        try F.stanzas(XMLSerializer.serialize(element, parentNamespace: F.client), chunk: 3).first
    }

    @Test(arguments: trickyText)
    func textSurvivesARoundTrip(text: String) throws {
        let message = Element(
            "message", namespace: F.client, attributes: [("to", "juliet@example.com")],
            children: [.element(Element("body", namespace: F.client, text: text))])
        #expect(try reparse(message) == message)
    }

    @Test(arguments: trickyText + ["new\nline", "a\tb\nc\rd"])
    func attributesSurviveARoundTrip(value: String) throws {
        let element = Element("presence", namespace: F.client, attributes: [("id", value), ("xml:lang", "zh")])
        #expect(try reparse(element) == element)
    }

    @Test func nestedNamespacesSurviveARoundTrip() throws {
        let message = Element(
            "message", namespace: F.client, attributes: [("type", "chat")],
            children: [
                .element(Element("body", namespace: F.client, text: "hi")),
                .element(Element("composing", namespace: "http://jabber.org/protocol/chatstates")),
                .element(Element(
                    "x", namespace: "jabber:x:data",
                    children: [.element(Element("field", namespace: "jabber:x:data", attributes: [("var", "a")]))])),
            ])
        #expect(try reparse(message) == message)
    }

    @Test func childrenWithoutNamespaceInheritOnTheWire() {
        let message = Element("message", namespace: F.client, children: [.element(Element("body", text: "hi"))])
        #expect(XMLSerializer.serialize(message, parentNamespace: F.client) == "<message><body>hi</body></message>")
        let wrapped = Element(
            "x", namespace: "urn:a",
            children: [.element(Element("y", children: [.element(Element("z", namespace: "urn:a"))]))])
        #expect(XMLSerializer.serialize(wrapped) == "<x xmlns=\"urn:a\"><y><z/></y></x>")
    }

    @Test func attributeEscaping() {
        #expect(XMLSerializer.escapeAttribute("a\"b'c<d>e&f\tg\nh\ri") == "a&quot;b&apos;c&lt;d&gt;e&amp;f&#9;g&#10;h&#13;i")
        #expect(XMLSerializer.escapeAttribute("中文😀") == "中文😀")
        let element = Element("iq", attributes: [("id", "x\"y")])
        #expect(XMLSerializer.serialize(element) == "<iq id=\"x&quot;y\"/>")
    }

    @Test func textEscaping() {
        #expect(XMLSerializer.escapeText("plain") == "plain")
        #expect(XMLSerializer.escapeText("a<b>&c\rd\"e'f") == "a&lt;b&gt;&amp;c&#13;d\"e'f")
        #expect(XMLSerializer.escapeText("]]>") == "]]&gt;")
    }

    @Test func charactersXMLCannotCarryAreReplaced() throws {
        #expect(XMLSerializer.escapeText("a\u{0}b\u{1B}c\u{FFFF}d\u{FFFE}") == "a\u{FFFD}b\u{FFFD}c\u{FFFD}d\u{FFFD}")
        #expect(XMLSerializer.escapeAttribute("a\u{7}b") == "a\u{FFFD}b")
        #expect(XMLSerializer.escapeText("\u{FF21}\u{F8FF}") == "\u{FF21}\u{F8FF}")
        let message = Element("message", namespace: F.client, children: [.element(Element("body", namespace: F.client, text: "bell\u{7}"))])
        let parsed = try #require(try reparse(message))
        #expect(parsed.child("body")?.text == "bell\u{FFFD}")
    }

    /// The escaper works on UTF-8 bytes; it must write what escaping scalar by scalar writes, for every kind of
    /// character (markup, controls, CR, the non-characters U+FFFE/U+FFFF and their three-byte neighbours, CJK,
    /// emoji). Checked against that scalar definition over random strings (it fails if a byte case is wrong).
    @Test func byteEscaperMatchesTheScalarDefinition() {
        let pool: [Unicode.Scalar] = ["a", "Z", " ", "&", "<", ">", "\"", "'", "\t", "\n", "\r", "\u{0}", "\u{1}", "\u{1F}",
                                      "\u{7F}", "é", "中", "😀", "\u{FF21}", "\u{F8FF}", "\u{FFFC}", "\u{FFFD}", "\u{FFFE}",
                                      "\u{FFFF}", "\u{EFFF}", "\u{E000}"]
        func reference(_ s: String, attribute: Bool) -> String {
            var out = ""
            for scalar in s.unicodeScalars {
                switch scalar {
                case "&": out += "&amp;"
                case "<": out += "&lt;"
                case ">": out += "&gt;"
                case "\r": out += "&#13;"
                case "\"" where attribute: out += "&quot;"
                case "'" where attribute: out += "&apos;"
                case "\n" where attribute: out += "&#10;"
                case "\t" where attribute: out += "&#9;"
                case "\t", "\n": out.unicodeScalars.append(scalar)
                default:
                    let bad = scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF
                    out.unicodeScalars.append(bad ? "\u{FFFD}" : scalar)
                }
            }
            return out
        }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            var s = ""
            for _ in 0..<Int.random(in: 0...12, using: &generator) { s.unicodeScalars.append(pool.randomElement(using: &generator)!) }
            #expect(XMLSerializer.escapeText(s) == reference(s, attribute: false), "text \(s.unicodeScalars.map { $0.value })")
            #expect(XMLSerializer.escapeAttribute(s) == reference(s, attribute: true), "attribute \(s.unicodeScalars.map { $0.value })")
            let element = Element("x", namespace: "jabber:client", attributes: [("a", s)], children: [.text(s)])
            #expect(XMLSerializer.serialize(element, parentNamespace: "jabber:client")
                == "<x a=\"\(reference(s, attribute: true))\">\(reference(s, attribute: false))</x>")
        }
    }
}
