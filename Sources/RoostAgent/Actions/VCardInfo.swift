import Foundation
public import RoostXMPP

/// A vCard as `roost vcard show` prints it: the text fields and where its photo is stored.
public struct VCardInfo: Codable, Sendable, Equatable {
    public var jid: String
    public var fullName: String?
    public var nickname: String?
    public var givenName: String?
    public var familyName: String?
    public var email: String?
    public var url: String?
    public var note: String?
    public var photoType: String?
    public var photoHash: String?
    public var photoPath: String?
    /// UTC milliseconds when it was fetched from the server.
    public var fetchedAt: Int64?

    public init(jid: String, vcard: VCard, photoHash: String?, photoPath: String?, fetchedAt: Int64?) {
        self.jid = jid
        fullName = vcard.fullName
        nickname = vcard.nickname
        givenName = vcard.givenName
        familyName = vcard.familyName
        email = vcard.email
        url = vcard.url
        note = vcard.note
        photoType = vcard.photo?.mimeType
        self.photoHash = photoHash
        self.photoPath = photoPath
        self.fetchedAt = fetchedAt
    }

    /// The vCard without its photo bytes, as kept in the archive's `vcard_raw` (the photo lives in its file).
    public static func rawWithoutPhoto(_ vcard: VCard) -> String {
        var copy = vcard
        copy.photo = nil
        return XMLSerializer.serialize(copy.element)
    }

    /// Reads a stored `vcard_raw` back; nil when it is not a vCard.
    public static func parseRaw(_ raw: String) -> VCard? {
        let parser = XMLStreamParser()
        let wrapped = "<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'>" + raw
        guard let events = try? parser.feed(Array(wrapped.utf8)) else { return nil }
        for case .stanza(let element) in events where element.name == "vCard" { return VCard(element) }
        return nil
    }
}
