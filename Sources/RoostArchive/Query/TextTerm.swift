/// A piece of text to find: a word (`foo`, `foo*`) or a quoted phrase (`"good morning"`).
public struct TextTerm: Sendable, Equatable {
    public var text: String
    public var isPhrase: Bool
    /// `foo*`: words starting with `foo` (ignored for CJK, which already matches substrings).
    public var isPrefix: Bool

    public init(_ text: String, isPhrase: Bool = false, isPrefix: Bool = false) {
        self.text = text
        self.isPhrase = isPhrase
        self.isPrefix = isPrefix
    }
}
