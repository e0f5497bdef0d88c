import Testing
import RoostXMPP

@Suite struct XMLStreamParserTests {
    typealias F = XMLFixture

    @Test func streamHeaderKeepsAttributesButNotNamespaceDeclarations() throws {
        let events = try F.events(F.header)
        let expected = Element(
            "stream", namespace: F.streams,
            attributes: [("from", "example.com"), ("to", "juliet@example.com"), ("id", "s1"), ("version", "1.0"), ("xml:lang", "en")])
        #expect(events == [.streamStart(expected)])
    }

    @Test func stanzaFedOneByteAtATimeGivesTheSameEvents() throws {
        let text = F.header
            + "<stream:features><starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'><required/></starttls></stream:features>"
            + "<message from='romeo@example.net/orchard' type='chat'><body>Wherefore art thou, Romeo? &amp; more</body></message>"
            + "</stream:stream>"
        let whole = try F.events(text)
        let byteByByte = try F.events(text, chunk: 1)
        #expect(whole.count == 4)
        #expect(byteByByte == whole)
        #expect(whole.last == .streamEnd)
    }

    @Test func featuresAndErrorsAreInTheStreamsNamespace() throws {
        let stanzas = try F.stanzas(
            "<stream:features><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>SCRAM-SHA-256</mechanism></mechanisms></stream:features>"
                + "<stream:error><not-well-formed xmlns='urn:ietf:params:xml:ns:xmpp-streams'/><text xmlns='urn:ietf:params:xml:ns:xmpp-streams' xml:lang='en'>bad</text></stream:error>")
        try #require(stanzas.count == 2)
        #expect(stanzas[0].name == "features")
        #expect(stanzas[0].namespace == F.streams)
        let mechanisms = try #require(stanzas[0].child("mechanisms", namespace: "urn:ietf:params:xml:ns:xmpp-sasl"))
        #expect(mechanisms.child("mechanism")?.text == "SCRAM-SHA-256")
        #expect(stanzas[1].name == "error")
        #expect(stanzas[1].namespace == F.streams)
        #expect(stanzas[1].child(inNamespace: "urn:ietf:params:xml:ns:xmpp-streams")?.name == "not-well-formed")
        #expect(stanzas[1].child("text", namespace: "urn:ietf:params:xml:ns:xmpp-streams")?[attribute: "xml:lang"] == "en")
    }

    @Test func stanzasInheritTheStreamDefaultNamespace() throws {
        let message = try #require(try F.stanzas("<message xml:lang='de'><body>Hallo</body><composing xmlns='http://jabber.org/protocol/chatstates'/></message>").first)
        #expect(message.namespace == F.client)
        #expect(message[attribute: "xml:lang"] == "de")
        #expect(message.attributes.count == 1)
        #expect(message.child("body")?.namespace == F.client)
        #expect(message.child("body")?.text == "Hallo")
        let composing = try #require(message.child(inNamespace: "http://jabber.org/protocol/chatstates"))
        #expect(composing.name == "composing")
        #expect(composing.attributes.isEmpty)
        #expect(composing.children.isEmpty)
    }

    @Test(arguments: ["jabber:server", "jabber:component:accept"])
    func otherDefaultNamespacesApplyToStanzas(namespace: String) throws {
        let events = try F.events(
            "<stream:stream xmlns='\(namespace)' xmlns:stream='http://etherx.jabber.org/streams' to='c.example'><iq type='get' id='1'/>")
        #expect(events.count == 2)
        #expect(events.last == .stanza(Element("iq", namespace: namespace, attributes: [("type", "get"), ("id", "1")])))
    }

    @Test func prefixedAttributesKeepTheirQualifiedNameAndItsDeclaration() throws {
        let iq = try #require(try F.stanzas("<iq xmlns:x='urn:example' x:flag='1' id='a'/>").first)
        #expect(iq.attributes.map(\.name) == ["xmlns:x", "x:flag", "id"])
        #expect(iq[attribute: "xmlns:x"] == "urn:example")
        // So the stanza, serialized (as the archive keeps it), parses again to itself (found by the xml fuzz target).
        let again = try #require(try F.stanzas(XMLSerializer.serialize(iq, parentNamespace: "jabber:client")).first)
        #expect(again == iq)
    }

    @Test func adjacentCharacterDataBecomesOneTextNode() throws {
        let text = "<message><body>a &amp; b &lt;c&gt; &#x263A; <![CDATA[<raw> & ]]>end</body></message>"
        for chunk in [1, 3, Int.max] {
            let message = try #require(try F.stanzas(text, chunk: chunk).first)
            let body = try #require(message.child("body"))
            #expect(body.children == [.text("a & b <c> ☺ <raw> & end")])
        }
    }

    @Test func textAroundChildElementsIsKeptInOrder() throws {
        let message = try #require(try F.stanzas("<message>one<b/>two</message>").first)
        #expect(message.children == [.text("one"), .element(Element("b", namespace: F.client)), .text("two")])
    }

    @Test func whitespaceKeepalivesProduceNoEvents() throws {
        let parser = XMLStreamParser()
        _ = try parser.feed(Array(F.header.utf8))
        #expect(try parser.feed(Array(" ".utf8)).isEmpty)
        #expect(try parser.feed(Array("\n \n".utf8)).isEmpty)
        let events = try parser.feed(Array("<presence/> \n<presence/> ".utf8))
        #expect(events == [.stanza(Element("presence", namespace: F.client)), .stanza(Element("presence", namespace: F.client))])
    }

    @Test func eventsArriveAsSoonAsTheirBytesDo() throws {
        let parser = XMLStreamParser()
        #expect(try parser.feed(Array("<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'".utf8)).isEmpty)
        #expect(try parser.feed(Array(">".utf8)).count == 1)
        #expect(try parser.feed(Array("<presence".utf8)).isEmpty)
        #expect(try parser.feed(Array("/>".utf8)) == [.stanza(Element("presence", namespace: F.client))])
        #expect(try parser.feed(Array("</stream:stream>".utf8)) == [.streamEnd])
    }

    @Test func resetStartsANewStreamAfterStartTLS() throws {
        let parser = XMLStreamParser()
        let first = try F.events(F.header + "<proceed xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>", parser: parser)
        #expect(first.count == 2)
        parser.reset()
        let second = try F.events(F.header + "<stream:features/>", parser: parser)
        #expect(second.count == 2)
        #expect(second.last == .stanza(Element("features", namespace: F.streams)))
    }

    @Test func resetDiscardsAHalfReceivedStanza() throws {
        let parser = XMLStreamParser()
        _ = try F.events(F.header + "<message><body>half", parser: parser)
        parser.reset()
        let events = try F.events(F.header + "<presence/>", parser: parser)
        #expect(events.last == .stanza(Element("presence", namespace: F.client)))
    }

    @Test func aFailedParserStaysFailedUntilReset() throws {
        let parser = XMLStreamParser()
        let error = F.error(F.header + "<message></iq>", parser: parser)
        #expect(error?.streamErrorCondition == "not-well-formed")
        #expect(F.error("<presence/>", parser: parser) == error)
        parser.reset()
        #expect(try F.events(F.header, parser: parser).count == 1)
    }

    @Test func notWellFormedNamesThePosition() {
        let error = F.error("<stream:stream xmlns:stream='http://etherx.jabber.org/streams'>\n<a></b>")
        guard case .notWellFormed(let message) = error else {
            Issue.record("expected notWellFormed, got \(String(describing: error))")
            return
        }
        #expect(message.contains("line 2"))
    }

    @Test func junkAfterTheStreamEndIsAnError() {
        #expect(F.error(F.header + "</stream:stream><presence/>")?.streamErrorCondition == "not-well-formed")
    }
}
