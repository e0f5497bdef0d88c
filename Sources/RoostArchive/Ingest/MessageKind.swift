/// The stanza `type` of a message.
public enum MessageKind: String, Sendable, Codable, CaseIterable {
    case chat, normal, groupchat, headline
}
