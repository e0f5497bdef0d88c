/// XEP-0444 Message Reactions: `<reactions id='target'><reaction>👍</reaction>…</reactions>` is the sender's whole
/// current set of reactions to one message (an empty element removes them all).
public enum Reactions {
    public struct Update: Sendable, Equatable {
        /// The target's id: its `id` attribute in a chat, the room's stanza-id in a group chat.
        public var target: String
        /// Distinct, in the order sent; each one emoji (a longer text is not a reaction and is dropped).
        public var emojis: [String]
    }

    /// At most this many reactions per update are kept (a hostile sender could send thousands).
    public static let maximumCount = 64

    public static func update(in message: Message) -> Update? {
        guard let element = message.element.child("reactions", namespace: Namespace.reactions),
              let target = element[attribute: "id"], !target.isEmpty else { return nil }
        var emojis: [String] = []
        for reaction in element.children("reaction", namespace: Namespace.reactions) {
            let text = reaction.text.trimmingCharacters(in: .whitespacesAndNewlines)
            // One grapheme cluster: the XEP allows only emoji, and a sentence is not one.
            guard text.count == 1, !emojis.contains(text), emojis.count < maximumCount else { continue }
            emojis.append(text)
        }
        return Update(target: target, emojis: emojis)
    }

    public static func element(target: String, emojis: [String]) -> Element {
        Element("reactions", namespace: Namespace.reactions, attributes: [("id", target)],
                children: emojis.map { .element(Element("reaction", namespace: Namespace.reactions, text: $0)) })
    }
}
