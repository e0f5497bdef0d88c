public import Foundation
import RoostXMPP

/// `vcard.publish`: updates the account's own vCard (XEP-0054), announces the photo hash in a presence update
/// (XEP-0153), and publishes the avatar over PEP (XEP-0084) when the server offers PEP. Fields not given are
/// kept as they are on the server.
public struct VCardPublishAction: AccountAction {
    public static let command = "vcard.publish"

    public var nickname: String?
    public var fullName: String?
    /// The new photo, base64 (the CLI reads the file: the agent may not see the same paths).
    public var photoBase64: String?
    public var photoType: String?
    public var removePhoto: Bool

    /// Larger photos make vCards that servers refuse (and that every contact downloads).
    public static let maxPhotoBytes = 256 * 1024

    public init(nickname: String? = nil, fullName: String? = nil, photo: Data? = nil, photoType: String? = nil, removePhoto: Bool = false) {
        self.nickname = nickname
        self.fullName = fullName
        photoBase64 = photo?.base64EncodedString()
        self.photoType = photoType
        self.removePhoto = removePhoto
    }

    public struct Published: Codable, Sendable, Equatable {
        public var vcard: VCardInfo
        /// Whether the avatar also went to PEP (XEP-0084).
        public var pep: Bool
    }

    public func perform(in context: ActionContext) async throws(ActionFailure) -> Published {
        var photo: VCard.Photo?
        if let photoBase64 {
            guard let data = Data(base64Encoded: photoBase64), !data.isEmpty else {
                throw ActionFailure(.invalidArgument, "the photo is not valid base64 data")
            }
            guard data.count <= Self.maxPhotoBytes else {
                throw ActionFailure(.invalidArgument, "the photo has \(data.count) bytes; at most \(Self.maxPhotoBytes) are accepted — scale it down")
            }
            photo = VCard.Photo(mimeType: photoType ?? ImageType.detect(data) ?? "image/png", data: data)
        }
        var vcard: VCard
        do {
            vcard = VCard.from(try await context.client.request(VCard.request(for: nil)))
        } catch .stanzaError(let error) where error.condition == "item-not-found" {
            vcard = VCard()
        } catch {
            throw ActionFailure.from(error, doing: "reading the current vCard")
        }
        if let nickname { vcard.nickname = nickname.isEmpty ? nil : nickname }
        if let fullName { vcard.fullName = fullName.isEmpty ? nil : fullName }
        if let photo { vcard.photo = photo }
        if removePhoto { vcard.photo = nil }
        _ = try await context.request(VCard.publishRequest(vcard), doing: "publishing the vCard")
        let info = try await VCardFetchAction.cache(vcard, of: context.account, context)

        // Kept on the client, so every later presence (also after a reconnect) carries the hash.
        context.client.setPresenceExtras([VCardAvatarUpdate.element(photoHash: info.photoHash)])
        var presence = context.client.currentPresence()
        if context.priority != context.client.configuration.priority {
            presence = Presence(priority: context.priority)
            presence.add(EntityCapabilities.element(for: context.client.ownDiscoInfo, node: EntityCapabilities.node))
            presence.add(VCardAvatarUpdate.element(photoHash: info.photoHash))
        }
        try context.send(presence, doing: "announcing the new photo")

        var pep = false
        if photo != nil || removePhoto, await PersonalEventing.isOffered(context) {
            try await PersonalEventing.publishAvatar(vcard.photo, hash: info.photoHash, context)
            pep = true
        }
        return Published(vcard: info, pep: pep)
    }
}
