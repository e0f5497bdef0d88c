import RoostCore
import RoostArchive
import RoostXMPP

/// `vcard.fetch`: reads a vCard from the server (the account's own when `jid` is the account), stores its
/// photo under `avatars/` and caches the fields in the archive's contact row (the seed's "fetch the card,
/// keep it locally").
public struct VCardFetchAction: AccountAction {
    public static let command = "vcard.fetch"

    public var jid: String

    public init(jid: String) { self.jid = jid }

    public func perform(in context: ActionContext) async throws(ActionFailure) -> VCardInfo {
        let contact = try JIDArgument.bare(jid)
        let own = contact == context.account
        let vcard: VCard
        do {
            let answer = try await context.client.request(VCard.request(for: own ? nil : contact))
            vcard = VCard.from(answer)
        } catch .stanzaError(let error) where ["item-not-found", "service-unavailable"].contains(error.condition) {
            // XEP-0054 §3.1: no vCard stored is answered with an empty one or item-not-found.
            vcard = VCard()
        } catch {
            throw ActionFailure.from(error, doing: "fetching the vCard of \(contact)")
        }
        return try await Self.cache(vcard, of: contact, context)
    }

    /// Stores the photo and records the fields; shared with `vcard.publish` for the account's own card.
    static func cache(_ vcard: VCard, of contact: JID, _ context: ActionContext) async throws(ActionFailure) -> VCardInfo {
        var hash: String?
        var path: String?
        if let photo = vcard.photo {
            let h = AvatarStore.hash(photo.data)
            hash = h
            path = try AvatarStore(dataDirectory: context.dataDirectory).store(photo, hash: h)
        }
        let now = Timestamp.now()
        try await context.archive.record([.vCard(VCardRecord(account: context.account.description, jid: contact.description,
                                                              nickname: vcard.nickname, fullName: vcard.fullName, photoHash: hash,
                                                              photoPath: path, raw: VCardInfo.rawWithoutPhoto(vcard), fetchedAt: now))])
        return VCardInfo(jid: contact.description, vcard: vcard, photoHash: hash, photoPath: path, fetchedAt: now)
    }
}
