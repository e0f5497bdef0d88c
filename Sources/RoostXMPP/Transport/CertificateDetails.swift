internal import COpenSSL

/// The parts of an X.509 certificate that error messages and name checks need, copied out of
/// OpenSSL so nothing refers to the certificate after it is freed.
struct CertificateDetails {
    /// RFC 4985 id-on-dnsSRV: the SRVName otherName carrying SRV-IDs such as `_xmpp-client.example.org`.
    static let srvNameOID = "1.3.6.1.5.5.7.8.7"

    var subject: String
    var issuer: String
    var notAfter: String
    var dnsNames: [String]
    var srvNames: [String]
    var commonNames: [String]
    /// SHA-256 of the DER encoding, as `AB:CD:…`.
    var fingerprint: String
    var fingerprintHex: String

    /// Names a user would recognise as "what the certificate is for".
    var presentedNames: [String] {
        let names = dnsNames + srvNames
        return names.isEmpty ? commonNames : names
    }

    /// `certificate` is an `X509 *` that the caller keeps alive for the duration of the call.
    init(_ certificate: OpaquePointer) {
        subject = Self.nameText(X509_get_subject_name(certificate))
        issuer = Self.nameText(X509_get_issuer_name(certificate))
        notAfter = Self.timeText(X509_get0_notAfter(certificate))
        let digest = Self.digest(certificate, EVP_sha256()) ?? []
        fingerprint = CertificateFingerprint.display(digest)
        fingerprintHex = fingerprint.lowercased().filter { $0 != ":" }
        (dnsNames, srvNames) = Self.subjectAltNames(certificate)
        commonNames = Self.commonNames(X509_get_subject_name(certificate))
    }

    static func digest(_ certificate: OpaquePointer, _ algorithm: OpaquePointer?) -> [UInt8]? {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard X509_digest(certificate, algorithm, &output, &length) == 1 else { return nil }
        return Array(output.prefix(Int(length)))
    }

    private static func nameText(_ name: OpaquePointer?) -> String {
        guard let name, let bio = BIO_new(BIO_s_mem()) else { return "?" }
        defer { BIO_free(bio) }
        guard roost_X509_NAME_print_rfc2253(bio, name) >= 0 else { return "?" }
        return memoryBIOText(bio)
    }

    private static func timeText(_ time: UnsafePointer<ASN1_TIME>?) -> String {
        guard let time, let bio = BIO_new(BIO_s_mem()) else { return "?" }
        defer { BIO_free(bio) }
        // ISO 8601 form ("2024-01-31 12:00:00Z") rather than OpenSSL's "Jan 31 12:00:00 2024 GMT".
        guard ASN1_TIME_print_ex(bio, time, UInt(ASN1_DTFLGS_ISO8601)) == 1 else { return "?" }
        return memoryBIOText(bio)
    }

    static func memoryBIOText(_ bio: OpaquePointer) -> String {
        var data: UnsafeMutablePointer<CChar>?
        let length = roost_BIO_get_mem_data(bio, &data)
        guard let data, length > 0 else { return "" }
        return data.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
    }

    private static func asn1Text(_ string: UnsafePointer<ASN1_STRING>?) -> String? {
        guard let string, let bytes = ASN1_STRING_get0_data(string) else { return nil }
        let length = Int(ASN1_STRING_length(string))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: length), as: UTF8.self)
    }

    private static func subjectAltNames(_ certificate: OpaquePointer) -> (dns: [String], srv: [String]) {
        guard let raw = X509_get_ext_d2i(certificate, NID_subject_alt_name, nil, nil) else { return ([], []) }
        let names = OpaquePointer(raw)
        defer { GENERAL_NAMES_free(names) }
        var dns: [String] = []
        var srv: [String] = []
        for index in 0..<roost_sk_GENERAL_NAME_num(names) {
            guard let name = roost_sk_GENERAL_NAME_value(names, index) else { continue }
            var type: Int32 = 0
            let value = GENERAL_NAME_get0_value(name, &type)
            switch type {
            case GEN_DNS:
                if let text = asn1Text(value?.assumingMemoryBound(to: ASN1_STRING.self)) { dns.append(text) }
            case GEN_OTHERNAME:
                var oid: OpaquePointer?
                var otherValue: UnsafeMutablePointer<ASN1_TYPE>?
                guard GENERAL_NAME_get0_otherName(name, &oid, &otherValue) == 1,
                      let oid, let otherValue, objectText(oid) == srvNameOID,
                      otherValue.pointee.type == V_ASN1_IA5STRING,
                      let text = asn1Text(otherValue.pointee.value.ia5string) else { continue }
                srv.append(text)
            default:
                continue
            }
        }
        return (dns, srv)
    }

    private static func objectText(_ object: OpaquePointer) -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        let length = OBJ_obj2txt(&buffer, Int32(buffer.count), object, 1)
        guard length > 0 else { return "" }
        return String(decoding: buffer.prefix(Int(min(length, 127))).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func commonNames(_ name: OpaquePointer?) -> [String] {
        guard let name else { return [] }
        var names: [String] = []
        var position: Int32 = -1
        while true {
            position = X509_NAME_get_index_by_NID(name, NID_commonName, position)
            guard position >= 0 else { break }
            let entry = X509_NAME_get_entry(name, position)
            if let text = asn1Text(X509_NAME_ENTRY_get_data(entry)) { names.append(text) }
        }
        return names
    }
}
