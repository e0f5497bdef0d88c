import Foundation

/// Defends against server-side request forgery through a chat message: a URL someone sent must not make
/// Roost fetch from the user's own machine or network (a router's admin page, a local service).
///
/// Roost resolves the host itself, keeps only public addresses, and the transfer is then pinned to the
/// address checked here (`CURLOPT_RESOLVE`), so a DNS answer that changes between check and connect (DNS
/// rebinding) cannot swap it; the connected address is checked once more before any byte is accepted.
enum AddressGuard {
    /// One resolved address, as text curl understands (`192.0.2.1`, `2001:db8::1`).
    struct Address: Hashable {
        var text: String
        var isIPv6: Bool
        var bytes: [UInt8]
    }

    enum Resolution {
        case addresses([Address])
        /// Every address is loopback, private, link-local, … (the first one, for the log).
        case privateOnly(Address)
        case failed(String)
    }

    /// The host's addresses Roost may connect to. An IP literal is not looked up.
    static func resolve(host: String, port: Int, allowPrivate: Bool) -> Resolution {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(bare, String(port), &hints, &list)
        guard status == 0, let list else {
            return .failed(String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(list) }
        var found: [Address] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = list
        while let entry = cursor {
            if let address = Self.address(entry.pointee), !found.contains(address) { found.append(address) }
            cursor = entry.pointee.ai_next
        }
        guard let first = found.first else { return .failed("no address") }
        if allowPrivate { return .addresses(found) }
        let allowed = found.filter { isPublic($0.bytes) }
        return allowed.isEmpty ? .privateOnly(first) : .addresses(allowed)
    }

    private static func address(_ info: addrinfo) -> Address? {
        guard let sockaddr = info.ai_addr else { return nil }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch info.ai_family {
        case AF_INET:
            var bytes = [UInt8](repeating: 0, count: 4)
            sockaddr.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { sin in
                var address = sin.pointee.sin_addr
                withUnsafeBytes(of: &address) { bytes = Array($0) }
                inet_ntop(AF_INET, &address, &text, socklen_t(text.count))
            }
            return Address(text: Self.text(text), isIPv6: false, bytes: bytes)
        case AF_INET6:
            var bytes = [UInt8](repeating: 0, count: 16)
            sockaddr.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { sin6 in
                var address = sin6.pointee.sin6_addr
                withUnsafeBytes(of: &address) { bytes = Array($0) }
                inet_ntop(AF_INET6, &address, &text, socklen_t(text.count))
            }
            return Address(text: Self.text(text), isIPv6: true, bytes: bytes)
        default:
            return nil
        }
    }

    private static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Parses an address as curl reports it (`CURLINFO_PRIMARY_IP`).
    static func bytes(of text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }

    /// True for a globally routable unicast address: not unspecified, loopback, private (RFC 1918, ULA),
    /// shared (CGNAT), link-local, multicast, broadcast, reserved or documentation; IPv6 forms that embed an
    /// IPv4 address (mapped, compatible, NAT64, 6to4) are judged by that address.
    static func isPublic(_ bytes: [UInt8]) -> Bool {
        switch bytes.count {
        case 4: return isPublicIPv4(bytes)
        case 16: return isPublicIPv6(bytes)
        default: return false
        }
    }

    private static func isPublicIPv4(_ b: [UInt8]) -> Bool {
        switch (b[0], b[1], b[2]) {
        case (0, _, _): return false                          // "this network", unspecified
        case (10, _, _): return false                         // private
        case (100, 64...127, _): return false                 // shared address space (CGNAT)
        case (127, _, _): return false                        // loopback
        case (169, 254, _): return false                      // link-local
        case (172, 16...31, _): return false                  // private
        case (192, 0, 0), (192, 0, 2): return false           // IETF protocol assignments, documentation
        case (192, 88, 99): return false                      // deprecated 6to4 relay
        case (192, 168, _): return false                      // private
        case (198, 18...19, _): return false                  // benchmarking
        case (198, 51, 100), (203, 0, 113): return false      // documentation
        case (224...255, _, _): return false                  // multicast, reserved, broadcast
        default: return true
        }
    }

    private static func isPublicIPv6(_ b: [UInt8]) -> Bool {
        let zeroPrefix = b[0..<10].allSatisfy { $0 == 0 }
        if zeroPrefix && b[10] == 0xff && b[11] == 0xff { return isPublicIPv4(Array(b[12..<16])) }   // ::ffff:a.b.c.d
        if b[0..<12].allSatisfy({ $0 == 0 }) { return false }                                        // ::, ::1, ::a.b.c.d
        if b[0] == 0x00, b[1] == 0x64, b[2] == 0xff, b[3] == 0x9b, b[4..<12].allSatisfy({ $0 == 0 }) {
            return isPublicIPv4(Array(b[12..<16]))                                                   // 64:ff9b::/96 NAT64
        }
        if b[0] == 0x20, b[1] == 0x02 { return isPublicIPv4(Array(b[2..<6])) }                      // 2002::/16 6to4
        if b[0] == 0xfe && b[1] & 0xc0 == 0x80 { return false }                                     // fe80::/10 link-local
        if b[0] == 0xfe && b[1] & 0xc0 == 0xc0 { return false }                                     // fec0::/10 site-local
        if b[0] & 0xfe == 0xfc { return false }                                                     // fc00::/7 unique local
        if b[0] == 0xff { return false }                                                            // multicast
        if b[0] == 0x01, b[1] == 0x00, b[2..<8].allSatisfy({ $0 == 0 }) { return false }             // 100::/64 discard
        if b[0] == 0x20, b[1] == 0x01, b[2] == 0x0d, b[3] == 0xb8 { return false }                   // 2001:db8::/32 documentation
        if b[0] == 0x20, b[1] == 0x01, b[2] == 0x00, b[3] == 0x00 { return false }                   // 2001::/32 Teredo
        return true
    }
}
