import Foundation

/// SCRAM-SHA-1 / SCRAM-SHA-256 / SCRAM-SHA-512, with or without channel binding (RFC 5802, RFC 7677,
/// draft-melnikov-scram-sha-512, RFC 9266, RFC 5929).
///
/// The server is authenticated too: success without a correct server signature (`v=`) is an error.
public final class SCRAMMechanism: SASLMechanism {
    /// RFC 7677 §4 floor; RFC 5802's own test vector uses exactly this count.
    static let minimumIterations = 4096
    /// A hostile server could otherwise make the client spin on PBKDF2 for minutes.
    static let maximumIterations = 10_000_000

    public let name: String
    /// The channel-binding type of a -PLUS exchange ("tls-unique", …); nil otherwise.
    public let channelBindingType: String?
    private let hash: HashAlgorithm
    private let username: String
    private let password: String
    private let gs2Header: String
    private let channelBindingData: [UInt8]
    private let fixedClientNonce: String?
    private var state: State = .initial

    private enum State {
        case initial
        case awaitingServerFirst(clientFirstBare: String, clientNonce: String, password: [UInt8])
        case awaitingServerFinal(expectedSignature: [UInt8])
        case verified(serverSignature: [UInt8])
        case failed
    }

    /// The GS2 channel-binding flag (RFC 5802 §7) this exchange sends.
    public enum ChannelBindingUse: Sendable, Equatable {
        /// "p=<type>": the -PLUS mechanism, bound to this TLS session.
        case bound(ChannelBinding)
        /// "y": the client could bind but the server offers no -PLUS mechanism; a server that does support
        /// binding then knows its -PLUS offer was stripped (RFC 5802 §6) and fails the exchange.
        case supportedButNotOffered
        /// "n": no binding — none is available, or the server offers -PLUS but no binding both sides share.
        case unused
    }

    /// - Parameters:
    ///   - channelBinding: what the exchange says about binding, see `ChannelBindingUse`.
    ///   - clientNonce: fixed nonce for known-answer tests; production code leaves it nil.
    public init(hash: HashAlgorithm, username: String, password: String, binding: ChannelBindingUse, clientNonce: String? = nil) {
        self.hash = hash
        self.username = username
        self.password = password
        self.fixedClientNonce = clientNonce
        let base = "SCRAM-\(hash.scramName)"
        switch binding {
        case .bound(let channelBinding):
            name = base + "-PLUS"
            gs2Header = "p=\(channelBinding.typeName),,"
            channelBindingData = channelBinding.data
            channelBindingType = channelBinding.typeName
        case .supportedButNotOffered:
            name = base
            gs2Header = "y,,"
            channelBindingData = []
            channelBindingType = nil
        case .unused:
            name = base
            gs2Header = "n,,"
            channelBindingData = []
            channelBindingType = nil
        }
    }

    public func initialResponse() throws(SASLError) -> [UInt8] {
        try failingOnError { () throws(SASLError) in try startExchange() }
    }

    public func respond(to challenge: [UInt8]) throws(SASLError) -> [UInt8] {
        try failingOnError { () throws(SASLError) in try answer(challenge) }
    }

    public func verifySuccess(_ additionalData: [UInt8]?) throws(SASLError) {
        try failingOnError { () throws(SASLError) in try finish(additionalData ?? []) }
    }

    /// Marks the exchange dead on any error, so a half-finished mechanism cannot be resumed.
    private func failingOnError<T>(_ step: () throws(SASLError) -> T) throws(SASLError) -> T {
        do {
            return try step()
        } catch {
            state = .failed
            throw error
        }
    }

    private func startExchange() throws(SASLError) -> [UInt8] {
        guard case .initial = state else { throw .unexpectedMessage("SCRAM exchange already started") }
        let credentials = try PreparedCredentials(username: username, password: password)
        // 24 random bytes: 192 bits, and base64 without padding or commas.
        var nonce = fixedClientNonce ?? ""
        if nonce.isEmpty { nonce = Data(try CryptoUtilities.randomBytes(24)).base64EncodedString() }
        let bare = "n=\(Self.escape(credentials.username)),r=\(nonce)"
        state = .awaitingServerFirst(clientFirstBare: bare, clientNonce: nonce, password: credentials.password)
        return Array((gs2Header + bare).utf8)
    }

    private func answer(_ challenge: [UInt8]) throws(SASLError) -> [UInt8] {
        switch state {
        case .awaitingServerFirst(let bare, let nonce, let password):
            let (final, signature) = try clientFinal(serverFirst: challenge, clientFirstBare: bare, clientNonce: nonce, password: password)
            state = .awaitingServerFinal(expectedSignature: signature)
            return final
        case .awaitingServerFinal(let expected):
            // Some servers send server-final as a challenge and an empty <success/> afterwards.
            try verifyServerFinal(challenge, expected: expected)
            state = .verified(serverSignature: expected)
            return []
        case .initial, .verified, .failed:
            throw .unexpectedMessage("challenge received outside the SCRAM exchange")
        }
    }

    private func finish(_ data: [UInt8]) throws(SASLError) {
        switch state {
        case .verified(let expected):
            if !data.isEmpty { try verifyServerFinal(data, expected: expected) }
        case .awaitingServerFinal(let expected):
            guard !data.isEmpty else { throw .serverSignatureMissing }
            try verifyServerFinal(data, expected: expected)
            state = .verified(serverSignature: expected)
        case .initial, .awaitingServerFirst, .failed:
            throw .serverSignatureMissing
        }
    }

    // MARK: Steps

    private func clientFinal(serverFirst bytes: [UInt8], clientFirstBare: String, clientNonce: String,
                             password: [UInt8]) throws(SASLError) -> (message: [UInt8], serverSignature: [UInt8]) {
        guard let serverFirst = String(validating: bytes, as: UTF8.self) else {
            throw .malformedChallenge("server-first-message is not UTF-8")
        }
        let attributes = try SCRAMAttributes(parsing: serverFirst)
        if let error = attributes["e"] { throw .serverError(Self.sanitized(error)) }
        guard attributes.firstName != "m" else { throw .malformedChallenge("server requires an unsupported SCRAM extension") }
        guard let serverNonce = attributes["r"], let saltText = attributes["s"], let iterationText = attributes["i"] else {
            throw .malformedChallenge("server-first-message lacks r=, s= or i=")
        }
        guard serverNonce.hasPrefix(clientNonce), serverNonce.count > clientNonce.count else { throw .nonceMismatch }
        guard serverNonce.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) && $0 != "," }) else {
            throw .malformedChallenge("server nonce contains non-printable characters")
        }
        guard let saltData = Data(base64Encoded: saltText), !saltData.isEmpty else {
            throw .malformedChallenge("salt is not valid base64")
        }
        guard let iterations = Int(iterationText), iterations > 0 else {
            throw .malformedChallenge("iteration count is not a positive number")
        }
        guard iterations >= Self.minimumIterations else { throw .iterationCountTooLow(iterations) }
        guard iterations <= Self.maximumIterations else { throw .iterationCountTooHigh(iterations) }

        let channelBinding = Data(Array(gs2Header.utf8) + channelBindingData).base64EncodedString()
        let withoutProof = "c=\(channelBinding),r=\(serverNonce)"
        let authMessage = Array("\(clientFirstBare),\(serverFirst),\(withoutProof)".utf8)

        let saltedPassword = try hash.pbkdf2(password: password, salt: Array(saltData), iterations: iterations)
        let clientKey = try hash.hmac(key: saltedPassword, data: Array("Client Key".utf8))
        let storedKey = try hash.digest(clientKey)
        let clientSignature = try hash.hmac(key: storedKey, data: authMessage)
        let proof = zip(clientKey, clientSignature).map { $0 ^ $1 }
        let serverKey = try hash.hmac(key: saltedPassword, data: Array("Server Key".utf8))
        let serverSignature = try hash.hmac(key: serverKey, data: authMessage)

        let message = "\(withoutProof),p=\(Data(proof).base64EncodedString())"
        return (Array(message.utf8), serverSignature)
    }

    private func verifyServerFinal(_ bytes: [UInt8], expected: [UInt8]) throws(SASLError) {
        guard let serverFinal = String(validating: bytes, as: UTF8.self) else {
            throw .malformedChallenge("server-final-message is not UTF-8")
        }
        let attributes = try SCRAMAttributes(parsing: serverFinal)
        if attributes.firstName == "e", let error = attributes["e"] { throw .serverError(Self.sanitized(error)) }
        guard attributes.firstName == "v", let verifierText = attributes["v"] else { throw .serverSignatureMissing }
        guard let verifier = Data(base64Encoded: verifierText) else {
            throw .malformedChallenge("server signature is not valid base64")
        }
        guard CryptoUtilities.constantTimeEqual(Array(verifier), expected) else { throw .serverSignatureMismatch }
    }

    // MARK: Encoding

    /// RFC 5802 saslname: "=" and "," would break the attribute syntax.
    static func escape(_ username: String) -> String {
        username.replacingOccurrences(of: "=", with: "=3D").replacingOccurrences(of: ",", with: "=2C")
    }

    /// Server error values end up in logs; keep them short and printable.
    private static func sanitized(_ value: String) -> String {
        String(String.UnicodeScalarView(value.unicodeScalars.filter { (0x20...0x7E).contains($0.value) }.prefix(100)))
    }
}
