internal import COpenSSL
import Foundation

/// An EC key pair for throwaway test certificates.
final class TLSTestKey {
    let key: OpaquePointer   // EVP_PKEY *

    init() {
        key = roost_EVP_EC_gen("P-256")!
    }

    deinit { EVP_PKEY_free(key) }
}

/// A certificate minted in memory for one test run; never valid outside these tests.
final class TLSTestCertificate {
    let certificate: OpaquePointer   // X509 *
    let key: TLSTestKey

    private init(certificate: OpaquePointer, key: TLSTestKey) {
        self.certificate = certificate
        self.key = key
    }

    deinit { X509_free(certificate) }

    var pem: String {
        let bio = BIO_new(BIO_s_mem())!
        defer { BIO_free(bio) }
        PEM_write_bio_X509(bio, certificate)
        var data: UnsafeMutablePointer<CChar>?
        let length = roost_BIO_get_mem_data(bio, &data)
        return String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
    }

    var der: [UInt8] {
        let length = i2d_X509(certificate, nil)
        var bytes = [UInt8](repeating: 0, count: Int(length))
        bytes.withUnsafeMutableBufferPointer { buffer in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            _ = i2d_X509(certificate, &cursor)
        }
        return bytes
    }

    /// Writes the PEM to a fresh temporary file and returns its path.
    func writePEM() throws -> String {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("roost-tls-test-\(UUID().uuidString).pem").path
        try pem.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func authority(name: String = "Roost Test CA") -> TLSTestCertificate {
        make(commonName: name, extensions: [
            (NID_basic_constraints, "critical,CA:TRUE"),
            (NID_key_usage, "critical,keyCertSign,cRLSign"),
            (NID_subject_key_identifier, "hash"),
        ], issuer: nil, validFrom: -10 * day, validUntil: 3650 * day, digest: "SHA256")
    }

    /// A server certificate; `subjectAltName` is OpenSSL config syntax ("DNS:a,DNS:b"), nil for none.
    static func server(commonName: String, subjectAltName: String?, issuer: TLSTestCertificate?,
                       validFrom: Int = -day, validUntil: Int = 30 * day, digest: String = "SHA256") -> TLSTestCertificate {
        var extensions: [(Int32, String)] = [
            (NID_basic_constraints, "CA:FALSE"),
            (NID_ext_key_usage, "serverAuth"),
        ]
        if let subjectAltName { extensions.append((NID_subject_alt_name, subjectAltName)) }
        return make(commonName: commonName, extensions: extensions, issuer: issuer,
                    validFrom: validFrom, validUntil: validUntil, digest: digest)
    }

    static let day = 86_400
    nonisolated(unsafe) private static var nextSerial = 1
    private static let serialLock = NSLock()

    private static func make(commonName: String, extensions: [(Int32, String)], issuer: TLSTestCertificate?,
                             validFrom: Int, validUntil: Int, digest: String) -> TLSTestCertificate {
        let key = TLSTestKey()
        let x509 = X509_new()!
        X509_set_version(x509, 2)
        serialLock.lock()
        nextSerial += 1
        let serial = nextSerial
        serialLock.unlock()
        ASN1_INTEGER_set(X509_get_serialNumber(x509), serial)
        X509_gmtime_adj(X509_getm_notBefore(x509), validFrom)
        X509_gmtime_adj(X509_getm_notAfter(x509), validUntil)
        X509_set_pubkey(x509, key.key)
        let subject = X509_get_subject_name(x509)
        X509_NAME_add_entry_by_txt(subject, "O", MBSTRING_ASC, "Roost Tests", -1, -1, 0)
        X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC, commonName, -1, -1, 0)
        X509_set_issuer_name(x509, issuer.map { X509_get_subject_name($0.certificate) } ?? subject)

        var context = X509V3_CTX()
        X509V3_set_ctx(&context, issuer?.certificate ?? x509, x509, nil, nil, 0)
        var allExtensions = extensions
        if issuer != nil { allExtensions.append((NID_authority_key_identifier, "keyid")) }
        for (nid, value) in allExtensions {
            let ext = X509V3_EXT_conf_nid(nil, &context, nid, value)!
            X509_add_ext(x509, ext, -1)
            X509_EXTENSION_free(ext)
        }
        let algorithm = EVP_MD_fetch(nil, digest, nil)
        defer { EVP_MD_free(algorithm) }
        precondition(X509_sign(x509, (issuer?.key ?? key).key, algorithm) > 0, "signing test certificate failed")
        return TLSTestCertificate(certificate: x509, key: key)
    }
}
