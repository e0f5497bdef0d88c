import Foundation

/// An XMPP address (RFC 7622), normalised so that equal addresses compare equal.
///
/// Localpart and domain are case-folded, the resource keeps its case; all parts are NFC.
/// Anything that would make routing ambiguous (empty parts, oversize parts, forbidden characters) is rejected.
public struct JID: Sendable, Hashable, Comparable, CustomStringConvertible, Codable {
    public let localpart: String?
    public let domain: String
    public let resource: String?

    public enum ParseError: Error, Equatable, CustomStringConvertible {
        case empty
        case emptyPart(String)
        case tooLong(String)
        case forbiddenCharacter(Character, part: String)

        public var description: String {
            switch self {
            case .empty: "empty address"
            case .emptyPart(let part): "the \(part) of the address is empty"
            case .tooLong(let part): "the \(part) of the address is longer than 1023 bytes"
            case .forbiddenCharacter(let c, let part): "the \(part) of the address contains a forbidden character \(String(reflecting: String(c)))"
            }
        }
    }

    public init(_ string: String) throws(ParseError) {
        guard !string.isEmpty else { throw .empty }
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
        try self.init(localpart: localpart, domain: String(rest), resource: resource)
    }

    public init(localpart: String?, domain: String, resource: String?) throws(ParseError) {
        var domain = domain.precomposedStringWithCanonicalMapping.lowercased()
        if domain.hasSuffix(".") { domain.removeLast() }
        guard !domain.isEmpty else { throw .emptyPart("domain") }
        guard domain.utf8.count <= 1023 else { throw .tooLong("domain") }
        for c in domain where c == "@" || c == "/" || c == " " || c.unicodeScalars.contains(where: { $0.value < 0x20 }) {
            throw .forbiddenCharacter(c, part: "domain")
        }
        if let l = localpart {
            let normalised = l.precomposedStringWithCanonicalMapping.lowercased()
            guard !normalised.isEmpty else { throw .emptyPart("localpart") }
            guard normalised.utf8.count <= 1023 else { throw .tooLong("localpart") }
            // RFC 7622 §3.3.1: these characters are not allowed in a localpart.
            for c in normalised where "\"&'/:<>@ ".contains(c) || c.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                throw .forbiddenCharacter(c, part: "localpart")
            }
            self.localpart = normalised
        } else {
            self.localpart = nil
        }
        if let r = resource {
            let normalised = r.precomposedStringWithCanonicalMapping
            guard !normalised.isEmpty else { throw .emptyPart("resource") }
            guard normalised.utf8.count <= 1023 else { throw .tooLong("resource") }
            for c in normalised where c.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                throw .forbiddenCharacter(c, part: "resource")
            }
            self.resource = normalised
        } else {
            self.resource = nil
        }
        self.domain = domain
    }

    /// Parses leniently: nil instead of an error, for attributes of incoming stanzas.
    public init?(parsing string: String?) {
        guard let string, let jid = try? JID(string) else { return nil }
        self = jid
    }

    public var bare: JID {
        resource == nil ? self : JID(uncheckedLocalpart: localpart, domain: domain, resource: nil)
    }

    public var isBare: Bool { resource == nil }

    public func with(resource: String) throws(ParseError) -> JID {
        try JID(localpart: localpart, domain: domain, resource: resource)
    }

    private init(uncheckedLocalpart: String?, domain: String, resource: String?) {
        self.localpart = uncheckedLocalpart
        self.domain = domain
        self.resource = resource
    }

    public var description: String {
        var s = ""
        if let localpart { s += localpart + "@" }
        s += domain
        if let resource { s += "/" + resource }
        return s
    }

    public static func < (lhs: JID, rhs: JID) -> Bool { lhs.description < rhs.description }

    public init(from decoder: any Decoder) throws {
        let string = try decoder.singleValueContainer().decode(String.self)
        do { try self.init(string) } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}
