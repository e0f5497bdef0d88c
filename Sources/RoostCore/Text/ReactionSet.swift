import Foundation

/// XEP-0444's rule for one reactor's set of reactions, applied wherever a set comes from (a live stanza, another
/// client's history): each reaction is one emoji — one grapheme cluster once surrounding white space is trimmed (a
/// longer text is not a reaction and is dropped) — each once, in the order given, at most `maximumCount` of them
/// (a hostile sender could send thousands).
public enum ReactionSet {
    public static let maximumCount = 64

    public static func normalized(_ texts: some Sequence<String>) -> [String] {
        var emojis: [String] = []
        for raw in texts {
            let text = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            guard text.count == 1, !emojis.contains(text), emojis.count < maximumCount else { continue }
            emojis.append(text)
        }
        return emojis
    }
}
