internal import COpenSSL
import Foundation

/// The server side of a TLS session over memory BIOs, so tests can pump bytes between it and a
/// client `TLSEngine` without any socket.
final class TLSTestServer {
    enum Failure: Error { case handshake(String), io(String) }

    private let context: OpaquePointer
    private let ssl: OpaquePointer
    private let networkIn: OpaquePointer
    private let networkOut: OpaquePointer
    let certificate: TLSTestCertificate
    private(set) var handshakeComplete = false
    private(set) var handshakeFailed = false

    /// `maxVersion` e.g. `TLS1_2_VERSION` to force TLS 1.2; ALPN "xmpp-client" is selected when offered;
    /// `extendedMasterSecret: false` refuses RFC 7627 (as very old servers do).
    init(certificate: TLSTestCertificate, maxVersion: Int32? = nil, extendedMasterSecret: Bool = true) {
        self.certificate = certificate
        context = SSL_CTX_new(TLS_server_method())!
        precondition(SSL_CTX_use_certificate(context, certificate.certificate) == 1)
        precondition(SSL_CTX_use_PrivateKey(context, certificate.key.key) == 1)
        if let maxVersion { precondition(roost_SSL_CTX_set_max_proto_version(context, maxVersion) == 1) }
        if !extendedMasterSecret { roost_SSL_CTX_disable_extms(context) }
        SSL_CTX_set_alpn_select_cb(context, selectXMPPClient, nil)
        ssl = SSL_new(context)!
        networkIn = BIO_new(BIO_s_mem())!
        networkOut = BIO_new(BIO_s_mem())!
        SSL_set_bio(ssl, networkIn, networkOut)
        SSL_set_accept_state(ssl)
    }

    deinit {
        SSL_free(ssl)
        SSL_CTX_free(context)
    }

    func consume(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        _ = bytes.withUnsafeBytes { BIO_write(networkIn, $0.baseAddress, Int32($0.count)) }
    }

    func drain() -> [UInt8] {
        let pending = Int(BIO_ctrl_pending(networkOut))
        guard pending > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: pending)
        let count = bytes.withUnsafeMutableBytes { BIO_read(networkOut, $0.baseAddress, Int32($0.count)) }
        return Array(bytes.prefix(Int(max(count, 0))))
    }

    func handshake() {
        guard !handshakeComplete, !handshakeFailed else { return }
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            handshakeComplete = true
            return
        }
        let error = SSL_get_error(ssl, result)
        if error != SSL_ERROR_WANT_READ && error != SSL_ERROR_WANT_WRITE {
            handshakeFailed = true
            ERR_clear_error()
        }
    }

    func write(_ text: String) {
        let bytes = Array(text.utf8)
        var written = 0
        precondition(SSL_write_ex(ssl, bytes, bytes.count, &written) == 1)
    }

    func read() -> String {
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            var count = 0
            guard SSL_read_ex(ssl, &chunk, chunk.count, &count) == 1 else { break }
            output += chunk.prefix(count)
        }
        ERR_clear_error()
        return String(decoding: output, as: UTF8.self)
    }

    func sendCloseNotify() {
        _ = SSL_shutdown(ssl)
    }

    /// The client's Finished message as the server received it: tls-unique of a full handshake (RFC 5929 §3.1).
    func clientFinished() -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 64)
        let count = SSL_get_peer_finished(ssl, &output, output.count)
        return Array(output.prefix(count))
    }

    func exporterChannelBinding() -> [UInt8]? {
        var output = [UInt8](repeating: 0, count: 32)
        let label = "EXPORTER-Channel-Binding"
        let result = SSL_export_keying_material(ssl, &output, 32, label, label.utf8.count, nil, 0, 0)
        return result == 1 ? output : nil
    }
}

/// Picks "xmpp-client" from the client's ALPN list, declines otherwise.
private func selectXMPPClient(_ ssl: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
                              _ outLength: UnsafeMutablePointer<UInt8>?, _ input: UnsafePointer<UInt8>?,
                              _ inputLength: UInt32, _ argument: UnsafeMutableRawPointer?) -> Int32 {
    guard let input, let out, let outLength else { return SSL_TLSEXT_ERR_NOACK }
    let wanted = Array("xmpp-client".utf8)
    var index = 0
    while index < Int(inputLength) {
        let length = Int(input[index])
        let start = index + 1
        if start + length <= Int(inputLength), Array(UnsafeBufferPointer(start: input + start, count: length)) == wanted {
            out.pointee = input + start
            outLength.pointee = UInt8(length)
            return SSL_TLSEXT_ERR_OK
        }
        index = start + length
    }
    return SSL_TLSEXT_ERR_NOACK
}
