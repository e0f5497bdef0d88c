internal import COpenSSL
import Glibc
import RoostCore
import Synchronization

/// A client TLS session that does no I/O: the caller feeds it what came from the network and sends
/// what it produces. This keeps the socket loop simple and the engine testable in memory.
///
/// Typical use: `consumeDataFromNetwork` what arrived, call `doHandshake` (or, once complete,
/// `readApplicationData`), then send `getDataForNetwork()` — after *every* call, since reads can
/// produce output too (TLS 1.3 key updates, alerts). Certificate checks happen inside `doHandshake`;
/// it throws before the client has sent anything that depends on the server being trusted.
///
/// All methods are serialized by an internal lock, so a reader thread and a writer may share one engine.
public final class TLSEngine: @unchecked Sendable {
    public enum HandshakeState: Sendable {
        case incomplete
        case complete
    }

    private let context: OpaquePointer      // SSL_CTX *
    private let ssl: OpaquePointer          // SSL *, owns both BIOs
    private let networkIn: OpaquePointer    // BIO * the SSL reads ciphertext from
    private let networkOut: OpaquePointer   // BIO * the SSL writes ciphertext to
    private let verifier: CertificateVerifier
    private let lock = Mutex<Void>(())

    private var handshakeComplete = false
    private var failure: TLSError?
    private var peerClosed = false
    private var shutdownSent = false

    public init(configuration: TLSConfiguration) throws(TLSError) {
        var pin: String?
        if let pinned = configuration.pinnedSHA256 {
            guard let normalized = CertificateFingerprint.normalized(pinned) else {
                throw .invalidConfiguration("the pinned fingerprint \"\(pinned)\" is not a SHA-256 fingerprint (64 hex digits)")
            }
            pin = normalized
        }
        // Creating the context, the session and their buffers reads no setting of the user's: failing, they ran
        // short of memory (or descriptors), which passes.
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw .resourceShortage("cannot create a TLS context: \(Self.drainErrors())")
        }
        let verifier = CertificateVerifier(serverName: configuration.serverName, pinnedSHA256: pin)
        do throws(TLSError) {
            try Self.configure(context, configuration, verifier)
        } catch {
            SSL_CTX_free(context)
            throw error
        }
        guard let ssl = SSL_new(context) else {
            SSL_CTX_free(context)
            throw .resourceShortage("cannot create a TLS session: \(Self.drainErrors())")
        }
        guard let networkIn = BIO_new(BIO_s_mem()), let networkOut = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            SSL_CTX_free(context)
            throw .resourceShortage("out of memory for TLS buffers")
        }
        SSL_set_bio(ssl, networkIn, networkOut)
        self.context = context
        self.ssl = ssl
        self.networkIn = networkIn
        self.networkOut = networkOut
        self.verifier = verifier
        try Self.configure(ssl, configuration)
        SSL_set_connect_state(ssl)
    }

    deinit {
        SSL_free(ssl)
        SSL_CTX_free(context)
    }

    // MARK: - Moving bytes

    public func consumeDataFromNetwork(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        locked {
            _ = bytes.withUnsafeBytes { BIO_write(networkIn, $0.baseAddress, Int32($0.count)) }
        }
    }

    /// Ciphertext waiting to be sent; empty when there is none.
    public func getDataForNetwork() -> [UInt8] {
        locked {
            let pending = Int(BIO_ctrl_pending(networkOut))
            guard pending > 0 else { return [] }
            var bytes = [UInt8](repeating: 0, count: pending)
            let read = bytes.withUnsafeMutableBytes { BIO_read(networkOut, $0.baseAddress, Int32($0.count)) }
            return read > 0 ? Array(bytes.prefix(Int(read))) : []
        }
    }

    /// Whether ciphertext is waiting to be sent (e.g. an answer to a post-handshake message).
    public var hasDataForNetwork: Bool {
        locked { BIO_ctrl_pending(networkOut) > 0 }
    }

    // MARK: - Session

    /// Advances the handshake with what has been consumed so far.
    public func doHandshake() throws(TLSError) -> HandshakeState {
        try locked { () throws(TLSError) -> HandshakeState in
            if let failure { throw failure }
            if handshakeComplete { return .complete }
            ERR_clear_error()
            let result = SSL_do_handshake(ssl)
            if result == 1 {
                handshakeComplete = true
                return .complete
            }
            switch SSL_get_error(ssl, result) {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                return .incomplete
            case SSL_ERROR_ZERO_RETURN:
                try fail(.handshakeFailed("the server closed the TLS session during the handshake"))
            default:
                try fail(verifier.failure ?? .handshakeFailed(Self.drainErrors()))
            }
        }
    }

    public func writeApplicationData(_ bytes: [UInt8]) throws(TLSError) {
        try locked { () throws(TLSError) in
            try requireEstablished()
            if shutdownSent { throw .closed }
            var offset = 0
            while offset < bytes.count {
                ERR_clear_error()
                var written = 0
                let result = bytes.withUnsafeBytes { buffer in
                    SSL_write_ex(ssl, buffer.baseAddress! + offset, buffer.count - offset, &written)
                }
                if result == 1 {
                    offset += written
                    continue
                }
                switch SSL_get_error(ssl, result) {
                case SSL_ERROR_ZERO_RETURN:
                    throw .closed
                default:
                    // The output BIO grows without limit, so "want write" cannot happen; anything here is fatal.
                    try fail(.protocolError(Self.drainErrors()))
                }
            }
        }
    }

    /// All plaintext that can be decrypted from what was consumed; `[]` when a record is still incomplete.
    /// Throws `.closed` once the server's close_notify has been read (after returning any data before it).
    public func readApplicationData() throws(TLSError) -> [UInt8] {
        try locked { () throws(TLSError) -> [UInt8] in
            try requireEstablished()
            if peerClosed { throw .closed }
            var plaintext: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 16384)
            while true {
                ERR_clear_error()
                var count = 0
                let result = chunk.withUnsafeMutableBytes { SSL_read_ex(ssl, $0.baseAddress, $0.count, &count) }
                if result == 1 {
                    plaintext += chunk.prefix(count)
                    continue
                }
                switch SSL_get_error(ssl, result) {
                case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                    return plaintext
                case SSL_ERROR_ZERO_RETURN:
                    peerClosed = true
                    if plaintext.isEmpty { throw .closed }
                    return plaintext
                default:
                    try fail(.protocolError(Self.drainErrors()))
                }
            }
        }
    }

    /// Queues close_notify; send `getDataForNetwork()` afterwards.
    public func shutdown() {
        locked {
            guard handshakeComplete, failure == nil, !shutdownSent else { return }
            shutdownSent = true
            ERR_clear_error()
            _ = SSL_shutdown(ssl)
            ERR_clear_error()
        }
    }

    // MARK: - What was negotiated

    /// The protocol version, e.g. "TLSv1.3"; nil before the handshake completes.
    public var negotiatedProtocol: String? {
        locked {
            guard handshakeComplete, let version = SSL_get_version(ssl) else { return nil }
            return String(cString: version)
        }
    }

    public var isTLS13: Bool {
        locked { handshakeComplete && SSL_version(ssl) == TLS1_3_VERSION }
    }

    /// The ALPN protocol the server selected, if any.
    public var alpnProtocol: String? {
        locked {
            var data: UnsafePointer<UInt8>?
            var length: UInt32 = 0
            SSL_get0_alpn_selected(ssl, &data, &length)
            guard let data, length > 0 else { return nil }
            return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
        }
    }

    /// SHA-256 of the server's leaf certificate, as `AB:CD:…`; known once the server sent it.
    public var peerCertificateSHA256: String? {
        locked {
            guard let certificate = SSL_get1_peer_certificate(ssl) else { return verifier.leafFingerprint }
            defer { X509_free(certificate) }
            return CertificateDetails(certificate).fingerprint
        }
    }

    /// RFC 9266 `tls-exporter` channel binding (32 bytes); nil unless TLS 1.3 is established.
    public func exporterChannelBinding() -> [UInt8]? {
        locked {
            guard handshakeComplete, SSL_version(ssl) == TLS1_3_VERSION else { return nil }
            let label = "EXPORTER-Channel-Binding"
            var output = [UInt8](repeating: 0, count: 32)
            let result = label.withCString { labelPointer in
                SSL_export_keying_material(ssl, &output, output.count, labelPointer, strlen(labelPointer), nil, 0, 0)
            }
            return result == 1 ? output : nil
        }
    }

    /// RFC 5929 `tls-unique` channel binding: the first Finished message of the handshake (ours on a full
    /// handshake, the server's on a resumed one). Nil on TLS 1.3, where it is undefined (RFC 9266), and when
    /// the session lacks the extended master secret (RFC 7627 §5.4: without it, a man in the middle can
    /// make two sessions share the value — the "triple handshake" attack).
    public func uniqueChannelBinding() -> [UInt8]? {
        locked {
            guard handshakeComplete, SSL_version(ssl) <= TLS1_2_VERSION, roost_SSL_get_extms_support(ssl) == 1 else { return nil }
            var finished = [UInt8](repeating: 0, count: 64)
            let length = finished.withUnsafeMutableBytes { buffer in
                SSL_session_reused(ssl) == 1
                    ? SSL_get_peer_finished(ssl, buffer.baseAddress, buffer.count)
                    : SSL_get_finished(ssl, buffer.baseAddress, buffer.count)
            }
            guard length > 0, length <= finished.count else { return nil }
            return Array(finished.prefix(length))
        }
    }

    /// RFC 5929 `tls-server-end-point` channel binding: the server certificate hashed with its
    /// signature's hash (MD5 and SHA-1 upgraded to SHA-256). Nil when that hash is undefined
    /// (e.g. Ed25519) or before the handshake completes.
    public func serverEndPointChannelBinding() -> [UInt8]? {
        locked {
            guard handshakeComplete, let certificate = SSL_get1_peer_certificate(ssl) else { return nil }
            defer { X509_free(certificate) }
            var digestNID: Int32 = NID_undef
            var keyNID: Int32 = NID_undef
            guard X509_get_signature_info(certificate, &digestNID, &keyNID, nil, nil) == 1,
                  digestNID != NID_undef else { return nil }
            if digestNID == NID_md5 || digestNID == NID_sha1 { digestNID = NID_sha256 }
            guard let digestName = OBJ_nid2sn(digestNID),
                  let algorithm = EVP_MD_fetch(nil, digestName, nil) else { return nil }
            defer { EVP_MD_free(algorithm) }
            return CertificateDetails.digest(certificate, algorithm)
        }
    }

    // MARK: - Internals

    private func locked<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        try lock.withLock { _ throws(Failure) -> Result in try body() }
    }

    private func requireEstablished() throws(TLSError) {
        if let failure { throw failure }
        guard handshakeComplete else { throw .protocolError("the TLS handshake has not completed yet") }
    }

    private func fail(_ error: TLSError) throws(TLSError) -> Never {
        failure = error
        throw error
    }

    private static func configure(_ context: OpaquePointer, _ configuration: TLSConfiguration,
                                  _ verifier: CertificateVerifier) throws(TLSError) {
        guard roost_SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION) == 1 else {
            throw .invalidConfiguration("cannot require TLS 1.2: \(drainErrors())")
        }
        // Idle sessions (one per account, mostly waiting) need not keep 2×16 KiB of buffers each.
        _ = roost_SSL_CTX_set_mode(context, Int(SSL_MODE_RELEASE_BUFFERS))
        if configuration.useSystemTrustStore {
            _ = SSL_CTX_set_default_verify_paths(context)
        }
        if let caFile = configuration.caFile {
            try loadCAFile(caFile, into: context)
        }
        verifier.install(on: context)
    }

    private static func loadCAFile(_ caFile: String, into context: OpaquePointer) throws(TLSError) {
        guard SSL_CTX_load_verify_file(context, caFile) == 1 else {
            let (errors, shortage) = drainErrorsNotingShortage()
            if shortage { throw .resourceShortage("cannot load CA certificates from \(caFile): \(errors)") }
            throw .invalidConfiguration("cannot load CA certificates from \(caFile): \(errors); it must be a readable PEM file")
        }
    }

    /// Loads `caFile` as a session would, so reading a config can refuse a CA file a connection would refuse.
    public static func checkCAFile(_ caFile: String) throws(TLSError) {
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw .resourceShortage("cannot create a TLS context: \(drainErrors())")
        }
        defer { SSL_CTX_free(context) }
        try loadCAFile(caFile, into: context)
    }

    private static func configure(_ ssl: OpaquePointer, _ configuration: TLSConfiguration) throws(TLSError) {
        let name = configuration.serverName
        if isIPAddress(name) {
            // SNI must not carry an IP address (RFC 6066 §3); the certificate needs an iPAddress SAN instead.
            guard X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name) == 1 else {
                throw .invalidConfiguration("cannot check certificates for address \(name)")
            }
        } else {
            guard roost_SSL_set_tlsext_host_name(ssl, name) == 1, SSL_set1_host(ssl, name) == 1 else {
                throw .invalidConfiguration("\"\(name)\" cannot be used as a TLS server name: \(drainErrors())")
            }
            SSL_set_hostflags(ssl, UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS))
        }
        if !configuration.alpn.isEmpty {
            var wire: [UInt8] = []
            for protocolName in configuration.alpn {
                let bytes = Array(protocolName.utf8)
                guard !bytes.isEmpty, bytes.count <= 255 else {
                    throw .invalidConfiguration("ALPN protocol name \"\(protocolName)\" must be 1 to 255 bytes")
                }
                wire.append(UInt8(bytes.count))
                wire += bytes
            }
            // Unlike most of OpenSSL, this returns 0 on success.
            guard SSL_set_alpn_protos(ssl, wire, UInt32(wire.count)) == 0 else {
                throw .invalidConfiguration("cannot set ALPN protocols: \(drainErrors())")
            }
        }
    }

    private static func isIPAddress(_ name: String) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 16)
        return inet_pton(AF_INET, name, &buffer) == 1 || inet_pton(AF_INET6, name, &buffer) == 1
    }

    /// Empties OpenSSL's per-thread error queue into one readable line.
    static func drainErrors() -> String { drainErrorsNotingShortage().text }

    /// The queue as one line, and whether an entry says a system call ran short of descriptors or memory
    /// (`ResourceShortage`) or an allocation failed: then the failure passes, whatever else the queue says.
    static func drainErrorsNotingShortage() -> (text: String, shortage: Bool) {
        var messages: [String] = []
        var shortage = false
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            let systemError = roost_ERR_system_errno(code)
            if (systemError != 0 && ResourceShortage.isShortage(errno: systemError)) || roost_ERR_is_malloc_failure(code) != 0 {
                shortage = true
            }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            messages.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return (messages.isEmpty ? "unknown TLS error" : messages.joined(separator: "; "), shortage)
    }
}
