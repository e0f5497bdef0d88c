internal import COpenSSL
import RoostCore

/// Decides whether the server's certificate is acceptable, inside the handshake.
///
/// It runs as OpenSSL's certificate verification callback, so a refusal aborts the handshake
/// right when the server's Certificate message arrives: the client never sends its Finished, let
/// alone application data, to a server it does not trust. It records why, for a precise error.
final class CertificateVerifier {
    let serverName: String
    /// Normalized (lowercase hex) pin, if the account pins the leaf certificate.
    let pinnedSHA256: String?
    private(set) var failure: TLSError?
    private(set) var leafFingerprint: String?

    init(serverName: String, pinnedSHA256: String?) {
        self.serverName = serverName
        self.pinnedSHA256 = pinnedSHA256
    }

    /// Installs the callback on `context`; `self` must outlive every SSL made from it.
    func install(on context: OpaquePointer) {
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        SSL_CTX_set_cert_verify_callback(context, verifyCallback, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Returns true to accept. `store` is the `X509_STORE_CTX *` OpenSSL prepared for this peer.
    fileprivate func verify(_ store: OpaquePointer) -> Bool {
        guard let leaf = X509_STORE_CTX_get0_cert(store) else {
            failure = .handshakeFailed("the server sent no certificate")
            return false
        }
        let leafDetails = CertificateDetails(leaf)
        leafFingerprint = leafDetails.fingerprint

        if let pinnedSHA256 {
            if leafDetails.fingerprintHex == pinnedSHA256 { return true }
            failure = .fingerprintMismatch(expected: CertificateFingerprint.display(hexBytes(pinnedSHA256)),
                                           actual: leafDetails.fingerprint)
            X509_STORE_CTX_set_error(store, X509_V_ERR_APPLICATION_VERIFICATION)
            return false
        }

        // OpenSSL checks DNS-IDs (and the CN when there are none) but not SRV-IDs (RFC 6125 §6.5.1);
        // when an SRV-ID matches, the name is proven and only the chain and dates remain to check.
        if matchesSRVID(leafDetails), X509_check_host(leaf, serverName, 0, hostFlags, nil) != 1 {
            X509_VERIFY_PARAM_set1_host(X509_STORE_CTX_get0_param(store), nil, 0)
        }

        if X509_verify_cert(store) == 1 { return true }
        let code = X509_STORE_CTX_get_error(store)
        // The system's CA folder is read certificate by certificate during this check, and OpenSSL takes a file it
        // could not open for a CA that is not there: with no descriptor left, "unknown authority" means nothing.
        if Self.issuerLookupFailures.contains(code), let shortage = ResourceShortage.descriptorShortageNow() {
            failure = .resourceShortage("the server certificate could not be checked: the CA certificates could not be read "
                + "(\(ResourceShortage.text(shortage)))")
            return false
        }
        let failing = X509_STORE_CTX_get_current_cert(store).map(CertificateDetails.init) ?? leafDetails
        failure = Self.error(for: code, failing: failing, leaf: leafDetails, serverName: serverName)
        return false
    }

    let hostFlags = UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS)

    /// Verdicts that come from not finding an issuer among the trusted certificates.
    static let issuerLookupFailures: Set<Int32> = [
        X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT, X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE,
        X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT, X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN,
    ]

    private func matchesSRVID(_ details: CertificateDetails) -> Bool {
        let domain = serverName.lowercased()
        return details.srvNames.contains { name in
            let lowered = name.lowercased()
            return lowered == "_xmpp-client.\(domain)" || lowered == "_xmpps-client.\(domain)"
        }
    }

    private func hexBytes(_ hex: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) {
            bytes.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        return bytes
    }

    static func error(for code: Int32, failing: CertificateDetails, leaf: CertificateDetails, serverName: String) -> TLSError {
        switch code {
        case X509_V_ERR_CERT_HAS_EXPIRED:
            return .certificateExpired(subject: failing.subject, notAfter: failing.notAfter, fingerprint: leaf.fingerprint)
        case X509_V_ERR_CERT_NOT_YET_VALID:
            return .certificateNotYetValid(subject: failing.subject, fingerprint: leaf.fingerprint)
        case X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH:
            return .hostnameMismatch(expected: serverName, presented: leaf.presentedNames, fingerprint: leaf.fingerprint)
        default:
            return .untrusted(subject: failing.subject, issuer: failing.issuer, reason: reason(for: code),
                              fingerprint: leaf.fingerprint)
        }
    }

    private static func reason(for code: Int32) -> String {
        switch code {
        case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
            return "it is self-signed"
        case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
            return "its chain ends in a self-signed CA that is not trusted"
        case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT,
             X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
            return "it was issued by an unknown certificate authority"
        default:
            return String(cString: X509_verify_cert_error_string(Int(code)))
        }
    }
}

/// The C entry point: recovers the verifier from `argument` and reports 1 (accept) or 0 (refuse).
private func verifyCallback(_ store: OpaquePointer?, _ argument: UnsafeMutableRawPointer?) -> Int32 {
    guard let store, let argument else { return 0 }
    let verifier = Unmanaged<CertificateVerifier>.fromOpaque(argument).takeUnretainedValue()
    return verifier.verify(store) ? 1 : 0
}
