/// The two OMEMO versions in use: 0.3 (what most clients still send) and OMEMO 2 (XEP-0384 0.8+).
public enum OMEMONamespace: String, Sendable, CaseIterable, Codable {
    case legacy = "eu.siacs.conversations.axolotl"
    case omemo2 = "urn:xmpp:omemo:2"

    /// libomemo-c's session version: 3 is libsignal's (OMEMO 0.3), 4 its OMEMO 2 wire format and KDF labels.
    var libraryVersion: UInt32 { self == .legacy ? 3 : 4 }

    public var shortName: String { self == .legacy ? "omemo:0.3" : "omemo:2" }
}

/// What a device publishes so that others can start a session with it (XEP-0384 bundle), in the key
/// encodings of its namespace: OMEMO 0.3 uses 33-byte Curve25519 keys with a type byte, OMEMO 2 the
/// 32-byte Ed25519 identity key and 32-byte Curve25519 prekeys.
public struct OMEMOBundle: Sendable, Equatable {
    public var identityKey: [UInt8]
    public var signedPreKeyID: UInt32
    public var signedPreKey: [UInt8]
    public var signedPreKeySignature: [UInt8]
    public var preKeys: [PreKey]

    public struct PreKey: Sendable, Equatable {
        public var id: UInt32
        public var key: [UInt8]

        public init(id: UInt32, key: [UInt8]) {
            self.id = id
            self.key = key
        }
    }

    public init(identityKey: [UInt8], signedPreKeyID: UInt32, signedPreKey: [UInt8], signedPreKeySignature: [UInt8], preKeys: [PreKey]) {
        self.identityKey = identityKey
        self.signedPreKeyID = signedPreKeyID
        self.signedPreKey = signedPreKey
        self.signedPreKeySignature = signedPreKeySignature
        self.preKeys = preKeys
    }
}

/// One `<key/>` of an `<encrypted/>` element: the message key, encrypted for one device.
public struct OMEMOKeyElement: Sendable, Equatable {
    /// OMEMO 2 groups keys by recipient bare JID (`<keys jid=…>`); OMEMO 0.3 does not.
    public var jid: String?
    public var device: UInt32
    /// `prekey="true"` (0.3) / `kex="true"` (2): a key exchange that can start a session.
    public var isKeyExchange: Bool
    public var data: [UInt8]

    public init(jid: String?, device: UInt32, isKeyExchange: Bool, data: [UInt8]) {
        self.jid = jid
        self.device = device
        self.isKeyExchange = isKeyExchange
        self.data = data
    }
}

/// An `<encrypted/>` element, decoded from XML but not decrypted.
public struct OMEMOEncryptedElement: Sendable, Equatable {
    public var namespace: OMEMONamespace
    public var senderDevice: UInt32
    public var keys: [OMEMOKeyElement]
    /// OMEMO 0.3 only: the AES-GCM IV.
    public var iv: [UInt8]?
    /// Absent in key-transport / heartbeat messages.
    public var payload: [UInt8]?

    public init(namespace: OMEMONamespace, senderDevice: UInt32, keys: [OMEMOKeyElement], iv: [UInt8]?, payload: [UInt8]?) {
        self.namespace = namespace
        self.senderDevice = senderDevice
        self.keys = keys
        self.iv = iv
        self.payload = payload
    }
}

/// A decrypted message: the plaintext (nil for key transport), who sent it and how far they are trusted.
public struct OMEMODecrypted: Sendable, Equatable {
    /// OMEMO 0.3: the body as UTF-8. OMEMO 2: the XEP-0420 envelope. nil: key transport or heartbeat.
    public var plaintext: [UInt8]?
    public var senderDevice: UInt32
    public var fingerprint: String
    public var trust: OMEMOTrust
}

/// Why a message could not be decrypted; `reason` is what the archive stores after `undecryptable: `.
public enum OMEMODecryptionFailure: Error, Sendable, Equatable {
    /// No `<key/>` for Roost's device: sent before Roost's device existed, or by a client that has not seen it yet.
    case notForThisDevice
    /// A normal message for a device with which no session exists (e.g. the key exchange was lost).
    case noSession
    /// The ratchet already used this message key: a copy of a message already archived.
    case duplicate
    /// The key element failed its MAC or could not be parsed.
    case corruptKey(String)
    /// The key exchange names a one-time prekey Roost does not have.
    case unknownPreKey
    /// The payload failed its authentication tag (forged or damaged).
    case payloadAuthentication
    case malformed(String)
    case store(String)

    public var reason: String {
        switch self {
        case .notForThisDevice: "not encrypted for this device"
        case .noSession: "no session with the sender's device"
        case .duplicate: "message key already used (a copy of an archived message)"
        case .corruptKey(let why): "bad key element (\(why))"
        case .unknownPreKey: "key exchange for an unknown prekey"
        case .payloadAuthentication: "payload failed authentication (bad MAC)"
        case .malformed(let why): "malformed: \(why)"
        case .store(let why): "key store error: \(why)"
        }
    }
}

/// Failures of the device itself (store, library), with what the user can do.
public enum OMEMOError: Error, Sendable, Equatable, CustomStringConvertible {
    case store(String)
    case library(String, code: Int32)
    case noSession(jid: String, device: UInt32)
    case invalidBundle(String)
    /// The session with this device has state waiting for the archive to commit; flush and retry.
    case busy

    public var description: String {
        switch self {
        case .store(let why): why
        case .library(let what, let code): "OMEMO: \(what) (libomemo-c error \(code))"
        case .noSession(let jid, let device): "no OMEMO session with \(jid) device \(device)"
        case .invalidBundle(let why): "invalid OMEMO bundle: \(why)"
        case .busy: "OMEMO state is being saved; retry"
        }
    }
}
