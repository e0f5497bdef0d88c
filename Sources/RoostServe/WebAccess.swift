import Foundation
internal import CSoup

/// Who may use the web view. A random token, made at start, comes in the URL that `roost serve` prints or
/// opens; the first request carrying it gets the token as an HttpOnly, SameSite=Strict cookie and a page that
/// moves on to the same address without it. Every later request must bring the cookie. Requests whose
/// `Host` is a name other than `localhost` (or one allowed by `--allow-host`) are refused, which defeats DNS
/// rebinding: a page of another site that rebinds its name to 127.0.0.1 still sends its own name. Forms
/// that change anything (export) are POSTs that carry a second token, `formToken`, embedded in the page.
struct WebAccess {
    let token: String
    let formToken: String
    let port: UInt16
    /// Lower-cased host names accepted besides IP addresses.
    let hostNames: Set<String>

    init(port: UInt16, hostNames: [String], token: String = WebAccess.randomToken(), formToken: String = WebAccess.randomToken()) {
        self.port = port
        self.token = token
        self.formToken = formToken
        self.hostNames = Set(["localhost"] + hostNames.map { $0.lowercased() })
    }

    /// 32 random bytes from the system's generator (getrandom), as hex.
    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max, using: &generator)) }.joined()
    }

    /// One cookie per port, so two servers on one machine do not overwrite each other's.
    var cookieName: String { "roost-\(port)" }

    /// The cookie sent after the token was presented: the browser keeps it for this session only, never sends
    /// it along with a request from another site, and page scripts cannot read it.
    var setCookieHeader: String { "\(cookieName)=\(token); Path=/; HttpOnly; SameSite=Strict" }

    func tokenMatches(_ candidate: String?) -> Bool {
        guard let candidate else { return false }
        return Self.constantTimeEqual(candidate, token)
    }

    func formTokenMatches(_ candidate: String?) -> Bool {
        guard let candidate else { return false }
        return Self.constantTimeEqual(candidate, formToken)
    }

    /// Whether the `Host` header names this server: an IP address (no DNS name can be rebound to it) or an
    /// allowed name, with this server's port.
    func hostAllowed(_ header: String?) -> Bool {
        guard let header, !header.isEmpty else { return false }
        let (host, port) = Self.splitHost(header)
        guard port == self.port else { return false }
        if hostNames.contains(host.lowercased()) { return true }
        return g_hostname_is_ip_address(host) != 0
    }

    /// `[::1]:8080` → (`::1`, 8080); `example.org` → (`example.org`, 80).
    static func splitHost(_ header: String) -> (String, UInt16?) {
        if header.hasPrefix("["), let close = header.firstIndex(of: "]") {
            let host = String(header[header.index(after: header.startIndex)..<close])
            let rest = header[header.index(after: close)...]
            if rest.isEmpty { return (host, 80) }
            guard rest.hasPrefix(":") else { return (host, nil) }
            return (host, UInt16(rest.dropFirst()))
        }
        guard let colon = header.lastIndex(of: ":") else { return (header, 80) }
        return (String(header[..<colon]), UInt16(header[header.index(after: colon)...]))
    }

    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for index in x.indices { difference |= x[index] ^ y[index] }
        return difference == 0
    }
}
