import RoostCore

/// Typed access to the members of one jsonl object, with messages that name the member at fault.
struct ImportFields {
    struct Problem: Error {
        let reason: String
    }

    let object: [String: JSONNode]
    /// `attachments[0].` etc., prefixed to member names in messages.
    var context = ""
    /// Addresses already checked during this import (shared by the objects of every line).
    var addresses = AddressCache()

    func string(_ key: String) throws(Problem) -> String {
        guard let value = object[key] else { throw Problem(reason: "missing \"\(context)\(key)\"") }
        guard case .string(let text) = value else { throw Problem(reason: "\"\(context)\(key)\" must be a string") }
        return text
    }

    func nonEmptyString(_ key: String) throws(Problem) -> String {
        let text = try string(key)
        if text.isEmpty { throw Problem(reason: "\"\(context)\(key)\" is empty") }
        return text
    }

    /// An XMPP address as the engine accepts it (`JIDSyntax`), normalised; `bare` refuses a resource.
    func jid(_ key: String, bare: Bool) throws(Problem) -> String {
        let text = try nonEmptyString(key)
        let checked: (text: String, hasResource: Bool)
        if let known = addresses.known[text] {
            checked = known
        } else {
            let parts: JIDSyntax.Parts
            do { parts = try JIDSyntax.parse(text) } catch {
                throw Problem(reason: "\"\(context)\(key)\" is not an XMPP address: \(error.description)")
            }
            checked = (parts.text, parts.resource != nil)
            addresses.remember(text, checked)
        }
        if bare && checked.hasResource {
            throw Problem(reason: "\"\(context)\(key)\" must be a bare address (no /resource)")
        }
        return checked.text
    }

    /// A conversation: a bare address, or `room@service/nick`, a private conversation with a room's occupant (the
    /// caller refuses it for a group chat message, whose conversation is the room itself).
    func conversation(_ key: String) throws(Problem) -> String {
        let text = try jid(key, bare: false)
        guard DedupKey.isRoomPrivate(text) else { return text }
        guard text.contains("@") else {
            throw Problem(reason: "\"\(context)\(key)\" must be a bare address, or room@service/nick for a private conversation in a room")
        }
        return text
    }

    /// `jid(key, bare:)` where the member is present and not null.
    func optionalJID(_ key: String, bare: Bool) throws(Problem) -> String? {
        try optionalString(key) == nil ? nil : jid(key, bare: bare)
    }

    /// `jid(key, bare: false)`, or "" where the member is an empty string (a message with no recorded `to`).
    func jidOrEmpty(_ key: String) throws(Problem) -> String {
        try string(key).isEmpty ? "" : jid(key, bare: false)
    }

    /// A resource as an address may carry it, or nil.
    func optionalResource(_ key: String) throws(Problem) -> String? {
        guard let text = try optionalString(key) else { return nil }
        do { return try JIDSyntax.parts(localpart: nil, domain: "resource.check", resource: text).resource } catch {
            throw Problem(reason: "\"\(context)\(key)\" is not a valid resource: \(error.description)")
        }
    }

    func optionalString(_ key: String) throws(Problem) -> String? {
        switch object[key] {
        case nil, .null?: return nil
        case .string(let text)?: return text
        default: throw Problem(reason: "\"\(context)\(key)\" must be a string or null")
        }
    }

    func bool(_ key: String, default fallback: Bool? = nil) throws(Problem) -> Bool {
        switch object[key] {
        case .bool(let flag)?: return flag
        case nil where fallback != nil: return fallback!
        case nil: throw Problem(reason: "missing \"\(context)\(key)\"")
        default: throw Problem(reason: "\"\(context)\(key)\" must be true or false")
        }
    }

    func optionalInteger(_ key: String) throws(Problem) -> Int64? {
        switch object[key] {
        case nil, .null?: return nil
        case .integer(let value)?: return value
        default: throw Problem(reason: "\"\(context)\(key)\" must be an integer or null")
        }
    }

    func time(_ key: String) throws(Problem) -> Int64 {
        guard let value = try optionalTime(key) else { throw Problem(reason: "missing \"\(context)\(key)\"") }
        return value
    }

    /// RFC 3339 text or UTC milliseconds.
    func optionalTime(_ key: String) throws(Problem) -> Int64? {
        switch object[key] {
        case nil, .null?: return nil
        case .integer(let value)?: return value
        case .string(let text)?:
            guard let value = Timestamp.parse(text) else {
                throw Problem(reason: "\"\(context)\(key)\" is not an RFC 3339 time: \(text.prefix(40))")
            }
            return value
        default: throw Problem(reason: "\"\(context)\(key)\" must be an RFC 3339 time")
        }
    }

    func choice<T: RawRepresentable & CaseIterable>(_ key: String, _: T.Type) throws(Problem) -> T where T.RawValue == String {
        let text = try string(key)
        guard let value = T(rawValue: text) else {
            let allowed = T.allCases.map(\.rawValue).joined(separator: ", ")
            throw Problem(reason: "\"\(context)\(key)\" is \"\(text.prefix(40))\"; expected one of \(allowed)")
        }
        return value
    }

    func objects(_ key: String) throws(Problem) -> [ImportFields] {
        switch object[key] {
        case nil, .null?: return []
        case .array(let items)?:
            var result: [ImportFields] = []
            for (index, item) in items.enumerated() {
                guard case .object(let members) = item else { throw Problem(reason: "\"\(context)\(key)[\(index)]\" must be an object") }
                result.append(ImportFields(object: members, context: "\(context)\(key)[\(index)].", addresses: addresses))
            }
            return result
        default: throw Problem(reason: "\"\(context)\(key)\" must be an array")
        }
    }

    func strings(_ key: String) throws(Problem) -> [String] {
        switch object[key] {
        case nil, .null?: return []
        case .array(let items)?:
            var result: [String] = []
            for item in items {
                guard case .string(let text) = item else { throw Problem(reason: "\"\(context)\(key)\" must hold strings") }
                result.append(text)
            }
            return result
        default: throw Problem(reason: "\"\(context)\(key)\" must be an array of strings")
        }
    }
}

/// The addresses an import has already checked and normalised, by their text as written. A history names the
/// same few hundred addresses on every line, and `JIDSyntax.parse` (stringprep-like checks, Unicode
/// normalisation through Foundation) was 23 % of an import's CPU time, counted twice (issue 15 profile).
/// Bounded: forgotten all at once when full (a history with more distinct addresses only parses them again).
final class AddressCache {
    static let limit = 16_384
    private(set) var known: [String: (text: String, hasResource: Bool)] = [:]

    func remember(_ written: String, _ checked: (text: String, hasResource: Bool)) {
        if known.count >= Self.limit { known.removeAll(keepingCapacity: true) }
        known[written] = checked
    }
}
