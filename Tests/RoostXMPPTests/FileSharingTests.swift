import Foundation
import Testing
@testable import RoostXMPP

private func parse(_ s: String) -> Element {
    let parser = XMLStreamParser()
    let events = try! parser.feed(Array("<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' version='1.0'>\(s)".utf8))
    for case .stanza(let e) in events { return e }
    fatalError("no stanza")
}

@Suite("File sharing extensions (XEP-0066, 0300, 0363, 0446, 0447)")
struct FileSharingTests {
    @Test func statelessFileSharingWithMetadataAndHashes() throws {
        let message = Message(parse("""
            <message from='bob@roost.test/phone' type='chat'><body>https://up.example/abc/cat.jpg</body>\
            <file-sharing xmlns='urn:xmpp:sfs:0' disposition='inline'><file xmlns='urn:xmpp:file:metadata:0'>\
            <media-type>image/jpeg</media-type><name>../../etc/cat.jpg</name><size>3032449</size><width>4096</width>\
            <height>3072</height><desc>Picture of 24th XSF Summit</desc>\
            <hash xmlns='urn:xmpp:hashes:2' algo='sha3-256'>2XarmwTlNxDAMkvymloX3S5+VbylNrJt/l5QyPa+YoU=</hash>\
            <hash xmlns='urn:xmpp:hashes:2' algo='id-blake2b256'>2AfMGH8O7UNPTvUVAM9aK13mpCY=</hash>\
            <hash xmlns='urn:xmpp:hashes:2' algo='sha-256'>  </hash></file>\
            <sources><url-data xmlns='http://jabber.org/protocol/url-data' target='https://up.example/abc/cat.jpg'/>\
            <url-data xmlns='http://jabber.org/protocol/url-data' target='https://mirror.example/cat.jpg'/></sources>\
            </file-sharing></message>
            """))
        let sharing = try #require(FileSharing.all(in: message).first)
        #expect(sharing.disposition == "inline")
        #expect(sharing.sources == ["https://up.example/abc/cat.jpg", "https://mirror.example/cat.jpg"])
        #expect(sharing.file.name == "cat.jpg", "a name is never a path")
        #expect(sharing.file.mediaType == "image/jpeg" && sharing.file.size == 3_032_449)
        #expect(sharing.file.width == 4096 && sharing.file.height == 3072 && sharing.file.description == "Picture of 24th XSF Summit")
        #expect(sharing.file.hashes.map(\.algorithm) == ["sha3-256", "id-blake2b256"], "an empty digest is dropped")
        // What we send reads back the same.
        let again = try #require(FileSharing(sharing.element))
        #expect(again == sharing)
    }

    @Test func malformedMetadataIsLeftOut() throws {
        let file = try #require(FileMetadata(parse("""
            <file xmlns='urn:xmpp:file:metadata:0'><size>-5</size><width>wide</width><name></name></file>
            """)))
        #expect(file.size == nil && file.width == nil && file.name == nil)
        #expect(FileMetadata(parse("<file xmlns='urn:example'/>")) == nil)
    }

    @Test func outOfBandURLs() {
        let message = Message(parse("""
            <message><body>x</body><x xmlns='jabber:x:oob'><url>https://a.example/1.png</url></x>\
            <x xmlns='jabber:x:oob'><url></url></x></message>
            """))
        #expect(OutOfBandData.urls(in: message) == ["https://a.example/1.png"])
        #expect(OutOfBandData.urls(in: Message(parse("<message><body>y</body></message>"))).isEmpty)
    }

    @Test func uploadServiceFromDiscoInfo() throws {
        let info = try #require(Disco.info(in: IQ(parse("""
            <iq type='result' from='upload.roost.test' id='1'><query xmlns='http://jabber.org/protocol/disco#info'>\
            <identity category='store' type='file'/><feature var='urn:xmpp:http:upload:0'/>\
            <x type='result' xmlns='jabber:x:data'><field var='FORM_TYPE' type='hidden'><value>urn:xmpp:http:upload:0</value></field>\
            <field var='max-file-size'><value>10485760</value></field></x></query></iq>
            """))))
        let service = try #require(HTTPUpload.service(try JID("upload.roost.test"), info: info))
        #expect(service.maxFileSize == 10_485_760)
        let plain = DiscoInfo(identities: [], features: ["http://jabber.org/protocol/disco#info"])
        #expect(HTTPUpload.service(try JID("roost.test"), info: plain) == nil)
    }

    @Test func slotRequestAndAnswer() throws {
        let request = HTTPUpload.slotRequest(to: try JID("upload.roost.test"), fileName: "a b.png", size: 42, contentType: "image/png")
        let payload = try #require(request.element.child("request", namespace: Namespace.httpUpload))
        #expect(payload[attribute: "filename"] == "a b.png" && payload[attribute: "size"] == "42" && payload[attribute: "content-type"] == "image/png")
        let slot = try #require(HTTPUpload.slot(in: IQ(parse("""
            <iq type='result' id='2'><slot xmlns='urn:xmpp:http:upload:0'><put url='https://up.example/put/1'>\
            <header name='Authorization'>Basic Base64String==</header><header name='Cookie'>foo=bar;
            user=romeo</header><header name='X-Evil'>1</header><header name='Host'>evil.example</header></put>\
            <get url='https://up.example/get/1'/></slot></iq>
            """))))
        #expect(slot.putURL == "https://up.example/put/1" && slot.getURL == "https://up.example/get/1")
        #expect(slot.headers.map(\.name) == ["Authorization", "Cookie"], "only the three headers XEP-0363 allows")
        #expect(slot.headers[1].value == "foo=bar;user=romeo", "no line break reaches an HTTP header")
    }

    @Test func refusalsNameTheLimit() throws {
        let error = try #require(StanzaError(stanza: parse("""
            <iq type='error' id='3'><error type='modify'><not-acceptable xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/>\
            <text xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'>File too large</text>\
            <file-too-large xmlns='urn:xmpp:http:upload:0'><max-file-size>20000</max-file-size></file-too-large></error></iq>
            """)))
        #expect(error.condition == "not-acceptable")
        let refused = HTTPUpload.refusedSize(error)
        #expect(refused.tooLarge && refused.maxFileSize == 20_000)
        #expect(!HTTPUpload.refusedSize(StanzaError(type: "wait", condition: "resource-constraint")).tooLarge)
    }
}
