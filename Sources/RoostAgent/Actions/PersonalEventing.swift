import Foundation
import RoostXMPP

/// XEP-0163 PEP and XEP-0084 User Avatar: the avatar as PEP data and metadata nodes.
enum PersonalEventing {
    /// XEP-0163 §4: the account's bare JID has a `pubsub/pep` identity when the server offers PEP.
    static func isOffered(_ context: ActionContext) async -> Bool {
        guard let answer = try? await context.client.request(Disco.infoRequest(to: context.account)),
              let info = Disco.info(in: answer) else { return false }
        return info.identities.contains { $0.category == "pubsub" && $0.type == "pep" }
    }

    /// XEP-0084 §4.1–4.2: data first (so a contact notified of the metadata can fetch it), then metadata;
    /// no photo publishes empty metadata, which means "no avatar".
    static func publishAvatar(_ photo: VCard.Photo?, hash: String?, _ context: ActionContext) async throws(ActionFailure) {
        var metadata = Element("metadata", namespace: Namespace.avatarMetadata)
        if let photo, let hash {
            let data = Element("data", namespace: Namespace.avatarData, text: photo.data.base64EncodedString())
            _ = try await context.request(publish(node: Namespace.avatarData, itemID: hash, payload: data), doing: "publishing the avatar (PEP)")
            var info = Element("info", namespace: Namespace.avatarMetadata,
                               attributes: [("bytes", String(photo.data.count)), ("id", hash), ("type", photo.mimeType)])
            if let size = ImageType.pngSize(photo.data) {
                info[attribute: "width"] = String(size.width)
                info[attribute: "height"] = String(size.height)
            }
            metadata.append(info)
        }
        _ = try await context.request(publish(node: Namespace.avatarMetadata, itemID: hash ?? "current", payload: metadata),
                                      doing: "publishing the avatar metadata (PEP)")
    }

    static func publish(node: String, itemID: String, payload: Element) -> IQ {
        let item = Element("item", namespace: Namespace.pubsub, attributes: [("id", itemID)], children: [.element(payload)])
        let publish = Element("publish", namespace: Namespace.pubsub, attributes: [("node", node)], children: [.element(item)])
        return IQ(type: .set, payload: Element("pubsub", namespace: Namespace.pubsub, children: [.element(publish)]))
    }
}
