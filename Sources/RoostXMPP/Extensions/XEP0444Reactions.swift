import RoostCore

/// XEP-0444 Message Reactions: `<reactions id='target'><reaction>👍</reaction>…</reactions>` is the sender's whole
/// current set of reactions to one message (an empty element removes them all).
public enum Reactions {
    public struct Update: Sendable, Equatable {
        /// The target's id: its `id` attribute in a chat, the room's stanza-id in a group chat.
        public var target: String
        /// Distinct, in the order sent; each one emoji (a longer text is not a reaction and is dropped).
        public var emojis: [String]
    }

    public static func update(in message: Message) -> Update? {
        guard let element = message.element.child("reactions", namespace: Namespace.reactions),
              let target = element[attribute: "id"], !target.isEmpty else { return nil }
        // The same rule as for reactions imported from other clients' histories.
        let emojis = ReactionSet.normalized(element.children("reaction", namespace: Namespace.reactions).map(\.text))
        return Update(target: target, emojis: emojis)
    }

    public static func element(target: String, emojis: [String]) -> Element {
        Element("reactions", namespace: Namespace.reactions, attributes: [("id", target)],
                children: emojis.map { .element(Element("reaction", namespace: Namespace.reactions, text: $0)) })
    }
}
