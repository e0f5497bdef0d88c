import Foundation
@testable import RoostXMPP

/// Target `sasl`: what a server says during SCRAM (RFC 5802): the input is a server-first-message, a NUL byte,
/// and a server-final-message (`v=` or `e=`), answered by Roost's `SCRAMMechanism` (SHA-1 and SHA-256).
///
/// Properties:
/// - no input crashes the mechanism or its attribute parser;
/// - no input authenticates the server: a server-final-message that the fuzzer wrote never passes
///   `verifySuccess` (the real signature needs the password);
/// - the client's answer to any server-first-message is a well-formed client-final-message (`c=…,r=…,p=…`).
///
/// Iteration counts above 4096 are lowered to 4096 by this harness: PBKDF2's cost up to the mechanism's cap
/// (10 million) is the accepted price of SCRAM, not a parser bug, and would only make inputs slow.
enum SCRAMFuzz {
    static let clientNonce = "fyko+d2lbbFgONRv9qkxdawL"

    static func check(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        let parts = bytes.split(separator: 0, maxSplits: 1, omittingEmptySubsequences: false)
        var serverFirst = Array(parts[0])
        let serverFinal = parts.count > 1 ? Array(parts[1]) : []
        if let text = String(validating: serverFirst, as: UTF8.self) {
            serverFirst = Array(lowered(text).utf8)
        }
        for hash in [HashAlgorithm.sha1, .sha256] {
            let scram = SCRAMMechanism(hash: hash, username: "user", password: "a password the fuzzer never sees", binding: .unused, clientNonce: clientNonce)
            guard (try? scram.initialResponse()) != nil else { return "no initial response" }
            guard let clientFinal = try? scram.respond(to: serverFirst) else { continue }
            guard let text = String(validating: clientFinal, as: UTF8.self), text.hasPrefix("c="), text.contains(",r="),
                  text.contains(",p=") else {
                return "malformed client-final-message \(clientFinal)"
            }
            if (try? scram.verifySuccess(serverFinal)) != nil {
                return "the fuzzer's server-final-message \(serverFinal) authenticated the server"
            }
        }
        return nil
    }

    /// `i=` above 4096 becomes 4096 (see above).
    static func lowered(_ text: String) -> String {
        text.split(separator: ",", omittingEmptySubsequences: false).map { field -> String in
            guard field.hasPrefix("i="), let count = Int(field.dropFirst(2)), count > 4096 else { return String(field) }
            return "i=4096"
        }.joined(separator: ",")
    }
}
