/// How a message was end-to-end encrypted, and what became of it. Stored with the message (schema v3).
public struct MessageEncryption: Sendable, Equatable, Codable {
    /// `omemo`.
    public var scheme: String
    /// The protocol namespace (`eu.siacs.conversations.axolotl`, `urn:xmpp:omemo:2`).
    public var protocolNamespace: String?
    /// The sending device's id and identity-key fingerprint (hex), once decrypted.
    public var senderDevice: Int64?
    public var fingerprint: String?
    /// The sending device's trust when the message was decrypted: `blind`, `verified`, `untrusted`, `distrusted`.
    public var trust: String?
    /// Why it could not be decrypted (the body is then NULL and `raw` keeps the encrypted stanza).
    public var failure: String?

    public init(scheme: String = "omemo", protocolNamespace: String?, senderDevice: Int64? = nil, fingerprint: String? = nil,
                trust: String? = nil, failure: String? = nil) {
        self.scheme = scheme
        self.protocolNamespace = protocolNamespace
        self.senderDevice = senderDevice
        self.fingerprint = fingerprint
        self.trust = trust
        self.failure = failure
    }

    public var isDecrypted: Bool { failure == nil }
    public var isTrusted: Bool { trust == "blind" || trust == "verified" }

    /// `undecryptable: <reason>` as shown in transcripts, or nil when decrypted.
    public var undecryptableText: String? { failure.map { "encrypted message, could not be decrypted: \($0)" } }
}

/// A message stored as undecryptable that has now been decrypted (`roost omemo retry`).
public struct MessageDecryption: Sendable, Equatable {
    public var messageID: Int64
    public var body: String
    public var encryption: MessageEncryption

    public init(messageID: Int64, body: String, encryption: MessageEncryption) {
        self.messageID = messageID
        self.body = body
        self.encryption = encryption
    }
}
