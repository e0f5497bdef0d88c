import Foundation

/// Finds the query's words and phrases in a text (case- and diacritic-insensitive, so `cafe` marks `Café`),
/// for highlighting results. Latin terms must start at a word boundary; CJK terms match anywhere.
public struct Highlighter: Sendable, Equatable {
    public let terms: [String]

    /// Highlights nothing (transcripts, exports, the mirror): made once, not for every row read.
    public static let none = Highlighter(terms: [])

    public init(terms: [String]) {
        var pieces: [String] = []
        for term in terms {
            if SearchText.containsCJK(term) {
                pieces.append(contentsOf: SearchText.wordSegments(term).filter(SearchText.hasTokenCharacters))
            } else if SearchText.hasTokenCharacters(term) {
                pieces.append(term)
            }
        }
        self.terms = Array(Set(pieces)).sorted { $0.count > $1.count }
    }

    /// Sorted, non-overlapping ranges of `text` to highlight.
    public func ranges(in text: String) -> [Range<String.Index>] {
        var found: [Range<String.Index>] = []
        for term in terms {
            let needsBoundary = !SearchText.containsCJK(term)
            var searchStart = text.startIndex
            while searchStart < text.endIndex,
                  let range = text.range(of: term, options: [.caseInsensitive, .diacriticInsensitive], range: searchStart..<text.endIndex) {
                searchStart = range.upperBound > range.lowerBound ? range.upperBound : text.index(after: range.lowerBound)
                if needsBoundary, range.lowerBound > text.startIndex {
                    let before = text[text.index(before: range.lowerBound)]
                    if before.isLetter || before.isNumber { continue }
                }
                found.append(range)
            }
        }
        found.sort { $0.lowerBound < $1.lowerBound }
        var merged: [Range<String.Index>] = []
        for range in found {
            if let last = merged.last, range.lowerBound <= last.upperBound {
                merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        return merged
    }

    /// `text` with every match wrapped in `open`/`close` (e.g. ANSI bold and reset).
    public func apply(to text: String, open: String, close: String) -> String {
        var output = ""
        var cursor = text.startIndex
        for range in ranges(in: text) {
            output += text[cursor..<range.lowerBound]
            output += open + text[range] + close
            cursor = range.upperBound
        }
        output += text[cursor...]
        return output
    }
}
