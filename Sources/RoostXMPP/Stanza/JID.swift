import Foundation
public import RoostCore

/// An XMPP address (RFC 7622), normalised so that equal addresses compare equal.
///
/// Localpart and domain are case-folded, the resource keeps its case; all parts are NFC.
/// Anything that would make routing ambiguous (empty parts, oversize parts, forbidden characters, a domain
/// that is no host name) is rejected: see `JIDSyntax`.
public struct JID: Sendable, Hashable, Comparable, CustomStringConvertible, Codable {
    public let localpart: String?
    public let domain: String
    public let resource: String?

    /// What is wrong with an address (the checks are `JIDSyntax`'s, shared with the importers).
    public typealias ParseError = JIDSyntax.Problem

    public init(_ string: String) throws(ParseError) {
        self.init(checked: try JIDSyntax.parse(string))
    }

    public init(localpart: String?, domain: String, resource: String?) throws(ParseError) {
        self.init(checked: try JIDSyntax.parts(localpart: localpart, domain: domain, resource: resource))
    }

    private init(checked parts: JIDSyntax.Parts) {
        localpart = parts.localpart
        domain = parts.domain
        resource = parts.resource
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
