/// The derived text the full-text index sees, so Chinese, Japanese and Korean are searchable without a
/// custom tokenizer. `unicode61` would index a CJK run (no spaces between words) as one huge token, so:
///
/// - In the `body`, `subject` and `sender` columns each CJK run of length ≥ 2 is replaced, in place, by its
///   overlapping bigrams separated by spaces (`消息提醒` → ` 消息 息提 提醒 `); a run of one character stays.
/// - The hidden `cjk` column holds every distinct CJK character of the message once (`消 息 提 醒`).
///
/// A query applies the same rewriting: a CJK term of n ≥ 2 characters becomes the phrase of its n-1 bigrams,
/// which occur consecutively exactly when the term is a substring of a run; a single character is matched
/// against the `cjk` column (or a one-character run in place). So recall equals `LIKE '%term%'` for CJK terms
/// that do not cross a non-CJK character.
enum SearchText {
    static let runSeparator: Unicode.Scalar = "\u{E000}"

    /// Letters of the CJK scripts (no punctuation: `unicode61` treats that as separators anyway).
    static func isCJK(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x1100...0x11FF, 0x3041...0x3096, 0x309D...0x309F, 0x30A1...0x30FA, 0x30FC...0x30FF,
             0x3105...0x312F, 0x3131...0x318E, 0x31A0...0x31BF, 0x31F0...0x31FF, 0x3400...0x4DBF,
             0x4E00...0x9FFF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xD7B0...0xD7FF, 0xF900...0xFAFF,
             0xFF66...0xFF9F, 0x20000...0x3134F:
            return true
        default:
            return false
        }
    }

    /// Cheap pre-check on UTF-8: every CJK letter starts with a lead byte ≥ 0xE1.
    static func mayContainCJK(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        utf8.contains { $0 >= 0xE1 }
    }

    static func containsCJK(_ text: String) -> Bool {
        text.unicodeScalars.contains(where: isCJK)
    }

    /// The column text: CJK runs rewritten as bigrams, everything else unchanged.
    static func indexed(_ text: String) -> String {
        guard containsCJK(text) else { return text }
        var output = String.UnicodeScalarView()
        var run: [Unicode.Scalar] = []
        // The last character of the previous run while no other token has followed it: when the next run
        // starts with the same character, their bigrams would chain into a false phrase match
        // (`的们 们今` looks like `的们今`), so a filler token (U+E000, never produced by a query word) goes between.
        var previousRunLast: Unicode.Scalar?
        func flush() {
            guard !run.isEmpty else { return }
            output.append(" ")
            if run.count > 1, previousRunLast == run[0] {
                output.append(runSeparator)
                output.append(" ")
            }
            previousRunLast = run.count > 1 ? run[run.count - 1] : nil
            if run.count == 1 {
                output.append(run[0])
            } else {
                for index in 0..<(run.count - 1) {
                    if index > 0 { output.append(" ") }
                    output.append(run[index])
                    output.append(run[index + 1])
                }
            }
            output.append(" ")
            run.removeAll(keepingCapacity: true)
        }
        for scalar in text.unicodeScalars {
            if isCJK(scalar) {
                run.append(scalar)
            } else {
                flush()
                output.append(scalar)
                if scalar.properties.isAlphabetic || scalar.properties.numericType != nil { previousRunLast = nil }
            }
        }
        flush()
        return String(output)
    }

    /// The hidden column: each distinct CJK character of all texts once, space separated.
    static func singles(_ texts: [String]) -> String {
        var seen = Set<UInt32>()
        var output = String.UnicodeScalarView()
        for text in texts {
            for scalar in text.unicodeScalars where isCJK(scalar) && seen.insert(scalar.value).inserted {
                if !output.isEmpty { output.append(" ") }
                output.append(scalar)
            }
        }
        return String(output)
    }

    /// Splits an unquoted query word into segments alternating between CJK runs and other text, so
    /// `abc你` searches `abc` AND `你` instead of demanding an adjacency the index cannot express.
    static func wordSegments(_ word: String) -> [String] {
        var segments: [String] = []
        var current = String.UnicodeScalarView()
        var currentIsCJK: Bool?
        for scalar in word.unicodeScalars {
            let cjk = isCJK(scalar)
            if let currentIsCJK, currentIsCJK != cjk {
                segments.append(String(current))
                current = String.UnicodeScalarView()
            }
            currentIsCJK = cjk
            current.append(scalar)
        }
        if !current.isEmpty { segments.append(String(current)) }
        return segments
    }

    /// True when `unicode61` would find at least one token in `text` (letters, digits or marks).
    static func hasTokenCharacters(_ text: String) -> Bool {
        text.unicodeScalars.contains { scalar in
            switch scalar.properties.generalCategory {
            case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
                 .decimalNumber, .letterNumber, .otherNumber, .privateUse:
                return true
            default:
                return false
            }
        }
    }
}
