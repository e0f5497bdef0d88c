import RoostXMPP

extension OMEMONamespace {
    /// libomemo-c's session version: 3 is libsignal's (OMEMO 0.3), 4 its OMEMO 2 wire format and KDF labels.
    var libraryVersion: UInt32 { self == .legacy ? 3 : 4 }
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
