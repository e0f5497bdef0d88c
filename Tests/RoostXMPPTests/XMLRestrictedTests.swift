import Testing
import RoostXMPP

@Suite struct XMLRestrictedTests {
    typealias F = XMLFixture

    static let restricted: [String] = [
        "<?xml version='1.0'?><!DOCTYPE stream:stream><stream:stream xmlns:stream='http://etherx.jabber.org/streams'>",
        "<!DOCTYPE stream [<!ENTITY x 'y'>]><stream/>",
        "<!DOCTYPE stream SYSTEM 'http://evil.example/dtd'><stream/>",
        F.header + "<?php echo 1; ?>",
        F.header + "<message><?target data?></message>",
        "<?xml version='1.0'?><?xml-stylesheet href='a.xsl'?><stream/>",
        F.header + "<!-- hello -->",
        F.header + "<message><body>a<!-- hidden -->b</body></message>",
        "<!-- before --><stream/>",
    ]

    @Test(arguments: restricted)
    func forbiddenConstructsAreRestrictedXML(text: String) {
        for chunk in [1, Int.max] {
            let error = F.error(text, chunk: chunk)
            guard case .restrictedXML = error else {
                Issue.record("expected restrictedXML for \(text), got \(String(describing: error))")
                return
            }
            #expect(error?.streamErrorCondition == "restricted-xml")
        }
    }

    @Test func billionLaughsIsRefusedBeforeAnyExpansion() {
        var dtd = "<!DOCTYPE lolz [<!ENTITY lol 'lol'>"
        dtd += "<!ENTITY lol1 '&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;'>"
        for level in 2...9 {
            dtd += "<!ENTITY lol\(level) '" + String(repeating: "&lol\(level - 1);", count: 10) + "'>"
        }
        dtd += "]>"
        let text = dtd + "<stream:stream xmlns:stream='http://etherx.jabber.org/streams'><message><body>&lol9;</body></message>"
        guard case .restrictedXML = F.error(text) else {
            Issue.record("billion laughs was not refused as restricted XML")
            return
        }
    }

    @Test func undeclaredEntitiesDoNotExpand() {
        #expect(F.error(F.header + "<message><body>&xxe;</body></message>")?.streamErrorCondition == "not-well-formed")
    }

    @Test func theXMLDeclarationIsAllowedAtTheStart() throws {
        let events = try F.events("<?xml version='1.0' encoding='UTF-8'?>\n<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'>")
        #expect(events.count == 1)
    }

    @Test func anXMLDeclarationLaterIsNotWellFormed() {
        #expect(F.error(F.header + "<?xml version='1.0'?>")?.streamErrorCondition == "not-well-formed")
    }

    @Test func errorsMapToStreamErrorConditions() {
        #expect(XMLStreamError.restrictedXML("x").streamErrorCondition == "restricted-xml")
        #expect(XMLStreamError.notWellFormed("x").streamErrorCondition == "not-well-formed")
        #expect(XMLStreamError.stanzaTooLarge(limit: 1).streamErrorCondition == "policy-violation")
        #expect(XMLStreamError.tooDeep(limit: 1).streamErrorCondition == "policy-violation")
        #expect(XMLStreamError.invalidUTF8.streamErrorCondition == "unsupported-encoding")
        #expect(XMLStreamError.stanzaTooLarge(limit: 10).description.contains("10 bytes"))
    }
}
