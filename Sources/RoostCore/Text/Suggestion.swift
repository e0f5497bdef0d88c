/// "Did you mean …?" for a mistyped name: a command (`roost serach`), a search filter (`frm:`), a config key or
/// group. One edit distance and one phrasing for all of them.
public enum Suggestion {
    /// Levenshtein distance: the insertions, deletions and substitutions of characters turning `a` into `b`.
    public static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            }
            previous = current
        }
        return previous[b.count]
    }

    /// The candidates `word` is a typo of: at most `maxDistance` edits away (by default one, two for names of
    /// six characters or more), or, with `prefixes`, a candidate it begins. Empty when more than `limit` fit:
    /// a guess among many helps nobody.
    public static func candidates(for word: String, among names: [String], prefixes: Bool = false, limit: Int = 4,
                                  maxDistance: (String) -> Int = { $0.count >= 6 ? 2 : 1 }) -> [String] {
        guard !word.isEmpty else { return [] }
        let lowered = word.lowercased()
        var close: [String] = []
        for name in names where name != word && !close.contains(name) {
            if (prefixes && name.hasPrefix(lowered)) || editDistance(name.lowercased(), lowered) <= maxDistance(name) {
                close.append(name)
            }
        }
        return close.count <= limit ? close : []
    }

    /// " (did you mean `a`, `b` or `c`?)", each name passed through `quote`; empty for no names.
    public static func phrase(_ names: [String], quote: (String) -> String = { "`\($0)`" }) -> String {
        guard let last = names.last else { return "" }
        let listed = names.map(quote)
        let text = listed.count == 1 ? listed[0] : listed.dropLast().joined(separator: ", ") + " or " + quote(last)
        return " (did you mean \(text)?)"
    }
}
