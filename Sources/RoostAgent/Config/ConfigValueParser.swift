import RoostCore
import RoostArchive
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Turns the text of one value into its typed form, or says what is expected.
/// Messages quote the offending value, so they are never used for `password` or `password_command`.
enum ConfigValueParser {
    /// A size in bytes (see `FileSize.parse`): `100M`, `1G`, `500000`.
    static func size(_ text: String) throws(ConfigValueError) -> Int64 {
        guard let size = FileSize.parse(text) else {
            throw ConfigValueError("expected a size such as 100M, 1G or 500000 (bytes), got '\(text)'")
        }
        return size
    }

    /// A size, or 0 (no limit, no minimum).
    static func sizeOrZero(_ text: String) throws(ConfigValueError) -> Int64 {
        if text.trimmingCharacters(in: .whitespaces) == "0" { return 0 }
        return try size(text)
    }

    /// A time between two runs: a positive number and a unit, `30s`, `15min`, `12h`, `1d`, `1w` (no `m`: in
    /// `[retention]` it means months).
    static func interval(_ text: String) throws(ConfigValueError) -> Int {
        let written = text.trimmingCharacters(in: .whitespaces).lowercased()
        let units: [(String, Int)] = [("min", 60), ("s", 1), ("h", 3600), ("d", 86_400), ("w", 604_800)]
        for (unit, seconds) in units where written.hasSuffix(unit) {
            if let number = Int(written.dropLast(unit.count)), number > 0, number <= 100_000 { return number * seconds }
            break
        }
        throw ConfigValueError("expected a time such as 30s, 15min, 12h, 1d or 1w, got '\(text)'")
    }

    static func port(_ text: String) throws(ConfigValueError) -> UInt16 {
        UInt16(try SettingValue.integer(text, in: 1...65535, what: "a port number"))
    }

    static func nonEmpty(_ text: String) throws(ConfigValueError) -> String {
        guard !text.isEmpty else { throw ConfigValueError("must not be empty") }
        return text
    }

    static func hostname(_ text: String) throws(ConfigValueError) -> String {
        guard !text.isEmpty, !text.contains(where: { $0.isWhitespace || $0 == "/" || $0 == "@" }) else {
            throw ConfigValueError("expected a host name or IP address, got '\(text)'")
        }
        return text
    }

    /// An IPv4 or IPv6 address (no name: a listening address is chosen, not resolved).
    static func ipAddress(_ text: String) throws(ConfigValueError) -> String {
        var v4 = in_addr(), v6 = in6_addr()
        guard inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1 else {
            throw ConfigValueError("expected an IP address such as 127.0.0.1 or ::1, got '\(text)'")
        }
        return text
    }

    /// Absolute after expanding `~/`; relative paths would depend on the directory Roost was started from.
    static func path(_ text: String, paths: ConfigPaths) throws(ConfigValueError) -> String {
        let expanded = paths.expandingTilde(text)
        guard expanded.hasPrefix("/") else {
            throw ConfigValueError("expected an absolute path or one starting with ~/, got '\(text)'")
        }
        return expanded
    }

    /// A SHA-256 fingerprint as 64 lowercase hex digits; colons between bytes are allowed in the input.
    static func fingerprint(_ text: String) throws(ConfigValueError) -> String {
        let digits = text.filter { $0 != ":" }.lowercased()
        guard digits.allSatisfy(\.isHexDigit), digits.allSatisfy(\.isASCII) else {
            throw ConfigValueError("expected hex digits (colons allowed), got '\(text)'")
        }
        guard digits.count == 64 else {
            throw ConfigValueError("a SHA-256 fingerprint has 32 bytes (64 hex digits), this one has \(digits.count) digits")
        }
        return digits
    }

    /// A room nick: one line, at most 1023 bytes (a JID resource).
    static func nick(_ text: String) throws(ConfigValueError) -> String {
        guard !text.isEmpty, !text.contains(where: \.isNewline), text.utf8.count <= 1023 else {
            throw ConfigValueError("expected a nick on one line, got '\(text)'")
        }
        return text
    }

    /// `highlight_words = deploy, server down`: words or phrases separated by commas, each searched as a phrase.
    static func highlightWords(_ text: String) throws(ConfigValueError) -> [String] {
        let words = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !words.isEmpty, !words.contains(where: { $0.contains("\"") || $0.contains(where: \.isNewline) }) else {
            throw ConfigValueError("expected words or phrases separated by commas, without quotes, e.g. deploy, server down")
        }
        return words
    }

    /// Room JIDs separated by commas, semicolons or spaces, lowercased.
    static func roomList(_ text: String) throws(ConfigValueError) -> [String] {
        var rooms: [String] = []
        for word in text.split(whereSeparator: { $0 == "," || $0 == ";" || $0 == " " || $0 == "\t" }) {
            let room = try bareJID(String(word))
            if !rooms.contains(room) { rooms.append(room) }
        }
        return rooms
    }

    /// A bare JID `localpart@domain` (RFC 7622), lowercased; a resource is configured separately.
    static func bareJID(_ text: String) throws(ConfigValueError) -> String {
        let forbiddenInLocalpart: Set<Character> = ["\"", "&", "'", "/", ":", "<", ">", "@"]
        guard !text.contains("/") else {
            throw ConfigValueError("'\(text)' has a resource; use the bare JID and set `resource` instead")
        }
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw ConfigValueError("'\(text)' is not a JID of the form localpart@domain")
        }
        let localpart = parts[0]
        let domain = parts[1]
        guard !localpart.contains(where: { forbiddenInLocalpart.contains($0) || $0.isWhitespace }),
              !domain.contains(where: { $0.isWhitespace }),
              !domain.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty),
              localpart.utf8.count <= 1023, domain.utf8.count <= 1023
        else {
            throw ConfigValueError("'\(text)' is not a valid JID of the form localpart@domain")
        }
        return text.lowercased()
    }
}
