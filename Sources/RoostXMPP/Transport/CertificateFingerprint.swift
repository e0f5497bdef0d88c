/// SHA-256 certificate fingerprints as users see and type them.
enum CertificateFingerprint {
    /// `AB:CD:…`, the form `openssl x509 -fingerprint -sha256` prints.
    static func display(_ digest: [UInt8]) -> String {
        digest.map { byte in
            let hex = String(byte, radix: 16, uppercase: true)
            return hex.count == 1 ? "0" + hex : hex
        }.joined(separator: ":")
    }

    /// Lowercase hex without separators, or nil when `text` is not a SHA-256 fingerprint.
    /// Accepts an optional `sha256:` / `SHA256 Fingerprint=` prefix, colons, spaces and any case.
    static func normalized(_ text: String) -> String? {
        var body = Substring(text.trimmingWhitespace())
        for prefix in ["sha256 fingerprint=", "sha256:", "sha256="] where body.lowercased().hasPrefix(prefix) {
            body = body.dropFirst(prefix.count)
            break
        }
        let hex = body.lowercased().filter { $0 != ":" && $0 != " " }
        guard hex.count == 64, hex.allSatisfy({ $0.isHexDigit }) else { return nil }
        return hex
    }
}

private extension String {
    func trimmingWhitespace() -> Substring {
        let scalars = unicodeScalars.drop { $0.properties.isWhitespace }
        var end = scalars.endIndex
        while end > scalars.startIndex, scalars[scalars.index(before: end)].properties.isWhitespace {
            end = scalars.index(before: end)
        }
        return Substring(scalars[scalars.startIndex..<end])
    }
}
