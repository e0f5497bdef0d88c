public import Foundation

/// XEP-0054 vcard-temp: the profile card (full name, nickname, photo) the seed app shows for contacts.
public struct VCard: Sendable, Equatable, Codable {
    public var fullName: String?
    public var nickname: String?
    public var givenName: String?
    public var familyName: String?
    public var email: String?
    public var url: String?
    public var note: String?
    public var photo: Photo?

    public struct Photo: Sendable, Equatable, Codable {
        public var mimeType: String
        public var data: Data

        public init(mimeType: String, data: Data) {
            self.mimeType = mimeType
            self.data = data
        }
    }

    public init(fullName: String? = nil, nickname: String? = nil, photo: Photo? = nil) {
        self.fullName = fullName
        self.nickname = nickname
        self.photo = photo
    }

    public init(_ element: Element) {
        func text(_ name: String, in parent: Element = element) -> String? {
            let t = parent.child(name, namespace: Namespace.vcard)?.text
            return (t?.isEmpty ?? true) ? nil : t
        }
        fullName = text("FN")
        nickname = text("NICKNAME")
        if let n = element.child("N", namespace: Namespace.vcard) {
            givenName = text("GIVEN", in: n)
            familyName = text("FAMILY", in: n)
        }
        email = element.child("EMAIL", namespace: Namespace.vcard).flatMap { text("USERID", in: $0) }
        url = text("URL")
        note = text("DESC")
        if let p = element.child("PHOTO", namespace: Namespace.vcard), let b64 = text("BINVAL", in: p),
           let data = Data(base64Encoded: b64.filter { !$0.isWhitespace }) {
            photo = Photo(mimeType: text("TYPE", in: p) ?? "image/png", data: data)
        }
    }

    public var element: Element {
        var e = Element("vCard", namespace: Namespace.vcard)
        func add(_ name: String, _ value: String?) {
            if let value { e.append(Element(name, namespace: Namespace.vcard, text: value)) }
        }
        add("FN", fullName)
        if givenName != nil || familyName != nil {
            var n = Element("N", namespace: Namespace.vcard)
            if let familyName { n.append(Element("FAMILY", namespace: Namespace.vcard, text: familyName)) }
            if let givenName { n.append(Element("GIVEN", namespace: Namespace.vcard, text: givenName)) }
            e.append(n)
        }
        add("NICKNAME", nickname)
        add("URL", url)
        add("DESC", note)
        if let email {
            e.append(Element("EMAIL", namespace: Namespace.vcard, children: [.element(Element("INTERNET", namespace: Namespace.vcard)),
                                                                                .element(Element("USERID", namespace: Namespace.vcard, text: email))]))
        }
        if let photo {
            e.append(Element("PHOTO", namespace: Namespace.vcard, children: [
                .element(Element("TYPE", namespace: Namespace.vcard, text: photo.mimeType)),
                .element(Element("BINVAL", namespace: Namespace.vcard, text: photo.data.base64EncodedString())),
            ]))
        }
        return e
    }

    /// §3.1: a vCard of another entity is fetched from its bare JID; nil `to` is the account's own.
    public static func request(for jid: JID?) -> IQ {
        IQ(type: .get, to: jid?.bare, payload: Element("vCard", namespace: Namespace.vcard))
    }

    public static func publishRequest(_ vcard: VCard) -> IQ {
        IQ(type: .set, payload: vcard.element)
    }

    /// Reads the vCard from a result; an empty result (no vCard stored) is an empty card.
    public static func from(_ iq: IQ) -> VCard {
        iq.element.child("vCard", namespace: Namespace.vcard).map(VCard.init) ?? VCard()
    }
}

/// XEP-0153 vCard-Based Avatars: the photo hash announced in presence.
public enum VCardAvatarUpdate {
    /// nil: the element is absent (client not ready to advertise); "": explicitly no photo; else the SHA-1 hex.
    public static func photoHash(in presence: Presence) -> String?? {
        guard let x = presence.element.child("x", namespace: Namespace.vcardUpdate) else { return .none }
        guard let photo = x.child("photo", namespace: Namespace.vcardUpdate) else { return .some(nil) }
        let text = photo.text
        return .some(text.isEmpty ? nil : text.lowercased())
    }

    public static func element(photoHash: String?) -> Element {
        var x = Element("x", namespace: Namespace.vcardUpdate)
        x.append(Element("photo", namespace: Namespace.vcardUpdate, children: photoHash.map { [.text($0)] } ?? []))
        return x
    }
}

extension VCardAvatarUpdate {
    /// The layer above wants the photo hashes of contacts' presence (PEP notification of the vCard update).
    public static let module = ClientModule(name: "XEP-0153 vCard-Based Avatars", features: [Namespace.vcardUpdate + "+notify"])
}
