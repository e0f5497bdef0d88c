internal import COpenSSL
import RoostXMPP
import Foundation

/// Moves bytes between a client `TLSEngine` and a `TLSTestServer` as a network would.
enum TLSTestPump {
    /// Runs the handshake until both sides are done; rethrows the client's failure after
    /// delivering whatever the client still sent (its alert) to the server.
    static func handshake(_ client: TLSEngine, _ server: TLSTestServer) throws(TLSError) {
        for _ in 0..<10 {
            let state: TLSEngine.HandshakeState
            do {
                state = try client.doHandshake()
            } catch {
                server.consume(client.getDataForNetwork())
                server.handshake()
                throw error
            }
            server.consume(client.getDataForNetwork())
            server.handshake()
            client.consumeDataFromNetwork(server.drain())
            if state == .complete && server.handshakeComplete { return }
        }
        throw .handshakeFailed("test handshake did not finish in 10 round trips")
    }

    /// Sends `text` from the client and returns what the server decrypted.
    static func clientToServer(_ text: String, _ client: TLSEngine, _ server: TLSTestServer) throws -> String {
        try client.writeApplicationData(Array(text.utf8))
        server.consume(client.getDataForNetwork())
        return server.read()
    }

    /// Sends `text` from the server and returns what the client decrypted.
    static func serverToClient(_ text: String, _ client: TLSEngine, _ server: TLSTestServer) throws -> String {
        server.write(text)
        client.consumeDataFromNetwork(server.drain())
        return String(decoding: try client.readApplicationData(), as: UTF8.self)
    }

    static func digest(_ bytes: [UInt8], _ name: String) -> [UInt8] {
        let algorithm = EVP_MD_fetch(nil, name, nil)
        defer { EVP_MD_free(algorithm) }
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        precondition(EVP_Digest(bytes, bytes.count, &output, &length, algorithm, nil) == 1)
        return Array(output.prefix(Int(length)))
    }

    static func colonHex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02X", $0) }.joined(separator: ":")
    }
}
