import Foundation

/// The SASLprep profile of stringprep (RFC 4013 over RFC 3454) for user names and passwords.
///
/// Strings are treated as queries: code points unassigned in Unicode 3.2 are allowed (RFC 5802 §5.1).
/// Tables are RFC 3454's; the bidi LCat test approximates table D.2 with the letter categories outside
/// right-to-left blocks, which is what the rule is for: rejecting strings mixing both directions.
enum SASLPrep {
    enum Failure: Error, Equatable {
        case prohibitedCharacter(Unicode.Scalar)
        case bidiViolation
    }

    static func prepare(_ input: String) throws(Failure) -> String {
        var mapped = String.UnicodeScalarView()
        for scalar in input.unicodeScalars {
            if isMappedToNothing(scalar) { continue }
            mapped.append(isNonASCIISpace(scalar) ? " " : scalar)
        }
        let normalized = String(mapped).precomposedStringWithCompatibilityMapping
        let scalars = Array(normalized.unicodeScalars)
        if let bad = scalars.first(where: isProhibited) { throw .prohibitedCharacter(bad) }
        try checkBidi(scalars)
        return normalized
    }

    // MARK: Mapping (RFC 4013 §2.1)

    /// RFC 3454 table C.1.2.
    static func isNonASCIISpace(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00A0, 0x1680, 0x2000...0x200B, 0x202F, 0x205F, 0x3000: true
        default: false
        }
    }

    /// RFC 3454 table B.1. U+200B is also in C.1.2; space mapping is checked after this, so it vanishes.
    static func isMappedToNothing(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00AD, 0x034F, 0x1806, 0x180B...0x180D, 0x200B...0x200D, 0x2060, 0xFE00...0xFE0F, 0xFEFF: true
        default: false
        }
    }

    // MARK: Prohibited output (RFC 4013 §2.3)

    static func isProhibited(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        switch value {
        case 0x0000...0x001F, 0x007F: return true                        // C.2.1
        case 0x0080...0x009F, 0x06DD, 0x070F, 0x180E, 0x200C, 0x200D, 0x2028, 0x2029,
             0x2060...0x2063, 0x206A...0x206F, 0xFEFF, 0xFFF9...0xFFFC, 0x1D173...0x1D17A: return true  // C.2.2
        case 0xE000...0xF8FF, 0xF0000...0xFFFFD, 0x100000...0x10FFFD: return true  // C.3
        case 0xFDD0...0xFDEF: return true                                 // C.4
        case 0xFFF9...0xFFFD: return true                                 // C.6
        case 0x2FF0...0x2FFB: return true                                 // C.7
        case 0x0340, 0x0341, 0x200E, 0x200F, 0x202A...0x202E: return true // C.8
        case 0xE0001, 0xE0020...0xE007F: return true                      // C.9
        default:
            if isNonASCIISpace(scalar) { return true }                    // C.1.2
            return value & 0xFFFE == 0xFFFE                               // C.4: last two code points of every plane
        }
    }

    // MARK: Bidi (RFC 3454 §6)

    static func checkBidi(_ scalars: [Unicode.Scalar]) throws(Failure) {
        guard scalars.contains(where: isRandALCat) else { return }
        guard !scalars.contains(where: isLCat),
              let first = scalars.first, let last = scalars.last,
              isRandALCat(first), isRandALCat(last) else { throw .bidiViolation }
    }

    /// RFC 3454 table D.1 (characters with bidi property R or AL).
    static func isRandALCat(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x05BE, 0x05C0, 0x05C3, 0x05D0...0x05EA, 0x05F0...0x05F4, 0x061B, 0x061F, 0x0621...0x063A,
             0x0640...0x064A, 0x066D...0x066F, 0x0671...0x06D5, 0x06DD, 0x06E5...0x06E6, 0x06FA...0x06FE,
             0x0700...0x070D, 0x0710, 0x0712...0x072C, 0x0780...0x07A5, 0x07B1, 0x200F, 0xFB1D,
             0xFB1F...0xFB28, 0xFB2A...0xFB36, 0xFB38...0xFB3C, 0xFB3E, 0xFB40...0xFB41, 0xFB43...0xFB44,
             0xFB46...0xFBB1, 0xFBD3...0xFD3D, 0xFD50...0xFD8F, 0xFD92...0xFDC7, 0xFDF0...0xFDFC,
             0xFE70...0xFE74, 0xFE76...0xFEFC:
            return true
        default:
            return false
        }
    }

    /// Approximates RFC 3454 table D.2 (bidi property L).
    static func isLCat(_ scalar: Unicode.Scalar) -> Bool {
        if isRandALCat(scalar) || isInRightToLeftBlock(scalar) { return false }
        if scalar.value == 0x200E { return true }
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter, .spacingMark:
            return true
        default:
            return false
        }
    }

    private static func isInRightToLeftBlock(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0590...0x08FF, 0xFB1D...0xFDFF, 0xFE70...0xFEFF, 0x10800...0x10FFF, 0x1E800...0x1EFFF: true
        default: false
        }
    }
}
