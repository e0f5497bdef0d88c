import Foundation

/// The one check of what an XMPP address may look like (RFC 7622), shared by the engine (`JID` in RoostXMPP),
/// the importers and the control socket: split at the first `/` and the `@` before it, NFC, case-folded
/// localpart and domain, and refused when routing would be ambiguous or the text could act on a terminal:
/// an empty or oversized part; a localpart with `"&'/:<>@`, a space or a control; a domain that is not
/// dot-separated labels (or a bracketed IPv6 literal); any part with control, bidirectional or other
/// invisible characters (PRECIS disallows them: RFC 8264 §9.13).
public enum JIDSyntax {
    public struct Parts: Sendable, Equatable {
        public var localpart: String?
        public var domain: String
        public var resource: String?

        /// `localpart@domain/resource`, normalised.
        public var text: String {
            (localpart.map { $0 + "@" } ?? "") + domain + (resource.map { "/" + $0 } ?? "")
        }
    }

    public enum Problem: Error, Equatable, Sendable, CustomStringConvertible {
        case empty
        case emptyPart(String)
        case tooLong(String)
        case forbiddenCharacter(Character, part: String)
        /// The domain is not a host name: an empty label (`a..b`, `.`), a label over 63 bytes.
        case invalidDomain(String)

        public var description: String {
            switch self {
            case .empty: "empty address"
            case .emptyPart(let part): "the \(part) of the address is empty"
            case .tooLong(let part): "the \(part) of the address is longer than 1023 bytes"
            case .forbiddenCharacter(let c, let part):
                "the \(part) of the address contains a forbidden character \(VisibleText.escaped(String(reflecting: String(c)), keepingLineBreaks: false))"
            case .invalidDomain(let why): "the domain of the address \(why)"
            }
        }
    }

    public static func parse(_ string: String) throws(Problem) -> Parts {
        guard !string.isEmpty else { throw .empty }
        if let parts = asciiParse(string) { return parts }
        return try generalParse(string)
    }

    /// `parse` for any string, by characters (the ASCII path must agree with it: `asciiSplitIsTheGeneralSplit`).
    static func generalParse(_ string: String) throws(Problem) -> Parts {
        // RFC 7622 §3.1: the resource starts at the first '/', the localpart ends at the first '@' before it.
        var rest = Substring(string)
        var resource: String?
        if let slash = rest.firstIndex(of: "/") {
            resource = String(rest[rest.index(after: slash)...])
            rest = rest[..<slash]
        }
        var localpart: String?
        if let at = rest.firstIndex(of: "@") {
            localpart = String(rest[..<at])
            rest = rest[rest.index(after: at)...]
        }
        return try parts(localpart: localpart, domain: String(rest), resource: resource)
    }

    /// Normalises and checks each part.
    public static func parts(localpart: String?, domain: String, resource: String?) throws(Problem) -> Parts {
        if let parts = asciiParts(localpart: localpart, domain: domain, resource: resource) { return parts }
        var domain = domain.precomposedStringWithCanonicalMapping.lowercased()
        if domain.hasSuffix(".") { domain.removeLast() }
        guard !domain.isEmpty else { throw .emptyPart("domain") }
        guard domain.utf8.count <= 1023 else { throw .tooLong("domain") }
        try checkDomain(domain)
        var parts = Parts(localpart: nil, domain: domain, resource: nil)
        if let l = localpart {
            let normalised = l.precomposedStringWithCanonicalMapping.lowercased()
            guard !normalised.isEmpty else { throw .emptyPart("localpart") }
            guard normalised.utf8.count <= 1023 else { throw .tooLong("localpart") }
            // RFC 7622 §3.3.1: these characters are not allowed in a localpart.
            for c in normalised where "\"&'/:<>@".contains(c) || c.unicodeScalars.contains(where: { $0.properties.isWhitespace || isInvisible($0) }) {
                throw .forbiddenCharacter(c, part: "localpart")
            }
            parts.localpart = normalised
        }
        if let r = resource {
            let normalised = r.precomposedStringWithCanonicalMapping
            guard !normalised.isEmpty else { throw .emptyPart("resource") }
            guard normalised.utf8.count <= 1023 else { throw .tooLong("resource") }
            for c in normalised where c.unicodeScalars.contains(where: isInvisible) {
                throw .forbiddenCharacter(c, part: "resource")
            }
            parts.resource = normalised
        }
        return parts
    }

    /// `parse` for an all-ASCII address, split on its bytes in one pass (every incoming stanza's `from`, `to` and
    /// stanza-id `by`: the `Character` walk and the copies of the general split were most of a live agent's JID
    /// cost). In ASCII every character is one byte but CR LF, which holds neither `/` nor `@`, so the split is
    /// the same; nil for anything `asciiParts` would not take, which then goes the general way.
    private static func asciiParse(_ string: String) -> Parts? {
        let utf8 = string.utf8
        var slash: String.Index?
        var at: String.Index?
        var index = utf8.startIndex
        while index != utf8.endIndex {
            let byte = utf8[index]
            if byte >= 0x80 { return nil }
            if slash == nil {
                if byte == UInt8(ascii: "/") { slash = index } else if byte == UInt8(ascii: "@"), at == nil { at = index }
            }
            utf8.formIndex(after: &index)
        }
        let hostEnd = slash ?? utf8.endIndex
        let resource = slash.map { String(string[utf8.index(after: $0)...]) }
        let localpart = at.map { String(string[..<$0]) }
        let domain = String(string[(at.map { utf8.index(after: $0) } ?? utf8.startIndex)..<hostEnd])
        return asciiParts(localpart: localpart, domain: domain, resource: resource)
    }

    /// The common case, without Foundation: every part ASCII and valid. NFC leaves ASCII as it is, so only the
    /// case folding and the checks remain, done on the bytes; this is what every incoming stanza's addresses
    /// take (the Unicode path cost a live ingest ~50 µs a message: `precomposedStringWithCanonicalMapping`
    /// bridges through `NSString`). Nil for anything else — non-ASCII, an IPv6 literal, or any part the checks
    /// would refuse —, which then takes the full path and gets its exact error from there.
    private static func asciiParts(localpart: String?, domain: String, resource: String?) -> Parts? {
        guard var domain = asciiLowercased(domain) else { return nil }
        if domain.hasSuffix(".") { domain.removeLast() }
        // Dot-separated labels of 1–63 bytes of `a-z0-9-_`.
        guard domain.utf8.count <= 1023 else { return nil }
        var label = 0
        for byte in domain.utf8 {
            switch byte {
            case UInt8(ascii: "."):
                guard label > 0 else { return nil }
                label = 0
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                label += 1
                guard label <= 63 else { return nil }
            default:
                return nil
            }
        }
        guard label > 0 else { return nil }
        var parts = Parts(localpart: nil, domain: domain, resource: nil)
        if let localpart {
            guard let folded = asciiLowercased(localpart), !folded.isEmpty, folded.utf8.count <= 1023,
                  folded.utf8.allSatisfy({ byte in
                      // Controls, DEL and space (the ASCII whitespace is all among them) and RFC 7622 §3.3.1's `"&'/:<>@`.
                      switch byte {
                      case 0...0x20, 0x7F, UInt8(ascii: "\""), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "/"),
                           UInt8(ascii: ":"), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "@"): false
                      default: true
                      }
                  }) else { return nil }
            parts.localpart = folded
        }
        if let resource {
            guard !resource.isEmpty, resource.utf8.count <= 1023,
                  resource.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
            parts.resource = resource
        }
        return parts
    }

    /// `text` with A–Z folded, or nil when it is not all ASCII. Returns `text` itself (no copy) when nothing folds.
    private static func asciiLowercased(_ text: String) -> String? {
        var hasUpper = false
        for byte in text.utf8 {
            if byte >= 0x80 { return nil }
            if byte >= UInt8(ascii: "A"), byte <= UInt8(ascii: "Z") { hasUpper = true }
        }
        guard hasUpper else { return text }
        return String(decoding: text.utf8.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 + 0x20 : $0 }, as: UTF8.self)
    }

    /// Host-name labels (letters and digits of any script, `-`, `_`) or a bracketed IPv6 literal.
    private static func checkDomain(_ domain: String) throws(Problem) {
        if domain.hasPrefix("[") {
            guard domain.hasSuffix("]"), domain.count > 2,
                  domain.dropFirst().dropLast().allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else {
                throw .invalidDomain("is not a valid IPv6 literal")
            }
            return
        }
        for label in domain.split(separator: ".", omittingEmptySubsequences: false) {
            guard !label.isEmpty else { throw .invalidDomain("has an empty label (two dots in a row, or only a dot)") }
            guard label.utf8.count <= 63 else { throw .invalidDomain("has a label longer than 63 bytes") }
            for c in label {
                let allowed = c.isASCII ? (c.isLetter || c.isNumber || c == "-" || c == "_")
                    : !c.unicodeScalars.contains(where: { $0.properties.isWhitespace || isInvisible($0) })
                if !allowed { throw .forbiddenCharacter(c, part: "domain") }
            }
        }
    }

    /// Controls and the characters `VisibleText` escapes: nowhere in an address.
    private static func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .control || VisibleText.isHidden(scalar)
    }
}
