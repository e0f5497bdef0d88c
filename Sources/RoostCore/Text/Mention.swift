/// Whether a text names someone: the one rule of the agent's mention notifications in rooms and of the pages'
/// mention highlight (`roost serve`, `roost export --format html`).
public enum Mention {
    /// `word` in `text` with no letter, digit or underscore right before or after it, case-insensitive.
    public static func containsWord(_ word: String, in text: String) -> Bool {
        containsAnyWord(of: [word], in: text)
    }

    /// One of `words` in `text` as a whole word (`containsWord`); the text is case-folded once for all of them.
    public static func containsAnyWord(of words: [String], in text: String) -> Bool {
        let words = words.filter { !$0.isEmpty }
        guard !words.isEmpty else { return false }
        let haystack = text.lowercased()
        return words.contains { occurs($0.lowercased(), in: haystack) }
    }

    private static func occurs(_ needle: String, in haystack: String) -> Bool {
        var searchStart = haystack.startIndex
        while let range = haystack.range(of: needle, range: searchStart..<haystack.endIndex) {
            let before = range.lowerBound == haystack.startIndex ? nil : haystack[haystack.index(before: range.lowerBound)]
            let after = range.upperBound == haystack.endIndex ? nil : haystack[range.upperBound]
            if !isWordCharacter(before) && !isWordCharacter(after) { return true }
            searchStart = haystack.index(after: range.lowerBound)
        }
        return false
    }

    private static func isWordCharacter(_ character: Character?) -> Bool {
        guard let character else { return false }
        return character.isLetter || character.isNumber || character == "_"
    }
}
