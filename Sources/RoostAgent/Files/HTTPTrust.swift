import Foundation
internal import CCurl
internal import COpenSSL
import RoostArchive
import RoostHTTP

/// The account's TLS trust settings applied to an HTTP transfer (file downloads and uploads), so a file
/// server is trusted exactly as the XMPP server is: `ca_file` replaces the system's CA store, and a pinned
/// `fingerprint` accepts the certificate with that SHA-256 whatever its chain or name (like the XMPP
/// connection does); anything else gets full verification of chain and host name.
struct HTTPTrust: Sendable, Hashable {
    var caFile: String?
    /// 64 lowercase hex digits.
    var pinnedSHA256: String?

    init(caFile: String? = nil, pinnedSHA256: String? = nil) {
        self.caFile = caFile
        self.pinnedSHA256 = pinnedSHA256
    }

    init(account: AccountConfig) {
        self.init(caFile: account.caFile, pinnedSHA256: account.fingerprint)
    }

    /// Sets verification on `easy` for a connection to `host`; the returned object must live as long as the
    /// transfer (it is the pin callback's context).
    func apply(to easy: CurlEasy, host: String) -> AnyObject? {
        easy.set(CURLOPT_SSL_VERIFYPEER, 1)
        easy.set(CURLOPT_SSL_VERIFYHOST, 2)
        if let caFile { easy.set(CURLOPT_CAINFO, caFile) }
        guard let pinnedSHA256, let pin = CertificatePin(hex: pinnedSHA256, host: host) else { return nil }
        // The pin may name a certificate whose name does not match; the host name is then checked in the
        // callback for every other certificate instead of by libcurl.
        easy.set(CURLOPT_SSL_VERIFYHOST, 0)
        easy.onTLSContext { context in
            SSL_CTX_set_cert_verify_callback(OpaquePointer(context), { store, argument in
                guard let store, let argument else { return 0 }
                return Unmanaged<CertificatePin>.fromOpaque(argument).takeUnretainedValue().verify(store)
            }, Unmanaged.passUnretained(pin).toOpaque())
            return true
        }
        return pin
    }
}

/// The pinned leaf certificate of `HTTPTrust`, and the host name that other certificates must carry.
private final class CertificatePin {
    let fingerprint: [UInt8]
    let host: String

    init?(hex: String, host: String) {
        guard let bytes = Hex.bytes(hex), bytes.count == 32 else { return nil }
        fingerprint = bytes
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    }

    func verify(_ store: OpaquePointer) -> Int32 {
        if let leaf = X509_STORE_CTX_get0_cert(store) {
            var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
            var length: UInt32 = 0
            if X509_digest(leaf, EVP_sha256(), &digest, &length) == 1, Array(digest.prefix(Int(length))) == fingerprint {
                return 1
            }
        }
        let parameters = X509_STORE_CTX_get0_param(store)
        if AddressGuard.bytes(of: host) != nil {
            X509_VERIFY_PARAM_set1_ip_asc(parameters, host)
        } else {
            X509_VERIFY_PARAM_set1_host(parameters, host, host.utf8.count)
        }
        return X509_verify_cert(store)
    }
}
