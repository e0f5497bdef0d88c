public import RoostCore
internal import COMEMO
public import RoostXMPP
internal import COpenSSL
import Foundation
import RoostArchive

/// Roost's own OMEMO device for one account: identity, prekeys, sessions and trust in `omemo.sqlite`, and
/// the crypto of both OMEMO versions (libomemo-c for the double ratchet, OpenSSL for the payloads).
///
/// Thread-safe: every call takes the device's lock (libomemo-c and the store are used from one thread at a
/// time). Decryptions open a change set whose ratchet state is written only by `commit(through:)`, after the
/// archive committed the message (see `KeyStore`).
public final class OMEMODevice: @unchecked Sendable {
    public let account: String
    public let deviceID: UInt32
    /// Hex of the identity key's Curve25519 form.
    public let fingerprint: String

    private let lock = NSLock()
    private let context: SignalContext
    private let store: KeyStore
    private let bridges: [OMEMONamespace: StoreBridge]
    private let identityPublic: [UInt8]
    /// Fulfilled, and replaced, when pending ratchet state is written or dropped (under `lock`): what an encryption
    /// refused as `.busy` waits for (`nextPendingStateChange`).
    private var pendingStateChange = OneShot<Void>()

    /// One-time prekeys kept available in the bundle.
    public static let preKeyCount = 100
    /// The signed prekey is replaced after a week; old ones stay a month for late key exchanges.
    static let signedPreKeyLifetime: Int64 = 7 * 86_400_000
    static let oldKeyGrace: Int64 = 30 * 86_400_000

    /// Opens (creating on first use) the device of `account` in the key store at `path`.
    public init(storePath path: String, account: String) throws(OMEMOError) {
        self.account = account.lowercased()
        context = try SignalContext()
        store = try KeyStore(path: path, account: self.account)
        let own: KeyStore.OwnDevice
        do {
            if let existing = try store.ownDevice() {
                own = existing
            } else {
                own = try Self.createDevice(context: context, store: store)
            }
        } catch let error as SQLiteError {
            throw .store("OMEMO key store: \(error)")
        } catch let error as OMEMOError {
            throw error
        } catch {
            throw .store("\(error)")
        }
        deviceID = own.deviceID
        let pair = try context.identityKeyPair(serialized: own.identity)
        identityPublic = pair.publicKey
        fingerprint = try context.fingerprint(ofSerializedKey: pair.publicKey)
        var bridges: [OMEMONamespace: StoreBridge] = [:]
        for namespace in OMEMONamespace.allCases {
            bridges[namespace] = try StoreBridge(store: store, namespace: namespace.rawValue, identityPublic: pair.publicKey,
                                                 identityPrivate: pair.privateKey, registrationID: own.deviceID, context: context.handle)
        }
        self.bridges = bridges
        do {
            _ = try store.recordIdentity(jid: self.account, device: deviceID, identity: pair.publicKey, fingerprint: fingerprint)
            _ = try store.setTrust(jid: self.account, fingerprints: [fingerprint], to: .verified)
        } catch {
            throw .store("OMEMO key store: \(error)")
        }
    }

    private static func createDevice(context: SignalContext, store: KeyStore) throws -> KeyStore.OwnDevice {
        // OMEMO 0.3 clients read device ids as signed 32-bit numbers: stay within 1...2^31-1.
        var id: UInt32 = 0
        while id == 0 { id = UInt32.random(in: 1...0x7FFF_FFFF) }
        let identity = try context.generateIdentityKeyPair()
        let device = KeyStore.OwnDevice(deviceID: id, identity: identity)
        try store.database.write { () throws(SQLiteError) in try store.saveOwnDevice(device) }
        return device
    }

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    // MARK: - Bundle

    /// The bundle to publish for `namespace`, after topping up one-time prekeys to `preKeyCount` and rotating
    /// the signed prekey when it is older than a week.
    public func bundle(for namespace: OMEMONamespace) throws(OMEMOError) -> OMEMOBundle {
        do {
            return try locked { () throws -> OMEMOBundle in
                try maintainKeys()
                guard let signed = try store.currentSignedPreKey(), let signedRecord = try store.loadSignedPreKey(signed.id) else {
                    throw OMEMOError.store("no signed prekey")
                }
                let spk = try context.signedPreKey(record: signedRecord)
                var preKeys: [OMEMOBundle.PreKey] = []
                for (id, record) in try store.unusedPreKeys() {
                    let key = try context.preKeyPublic(record: record, omemo2: namespace == .omemo2)
                    preKeys.append(OMEMOBundle.PreKey(id: id, key: key))
                }
                let identity = namespace == .omemo2 ? try context.edwardsForm(ofSerializedKey: identityPublic) : identityPublic
                return OMEMOBundle(identityKey: identity, signedPreKeyID: signed.id,
                                   signedPreKey: namespace == .omemo2 ? spk.publicOMEMO2 : spk.publicLegacy,
                                   signedPreKeySignature: namespace == .omemo2 ? spk.signatureOMEMO2 : spk.signatureLegacy,
                                   preKeys: preKeys)
            }
        } catch let error as OMEMOError {
            throw error
        } catch {
            throw .store("OMEMO key store: \(error)")
        }
    }

    /// How many one-time prekeys are unused now (the bundle needs republishing when it falls below the count).
    public func unusedPreKeyCount() -> Int {
        (try? locked { try store.unusedPreKeys().count }) ?? 0
    }

    private func maintainKeys() throws {
        let now = Timestamp.now()
        let current = try store.currentSignedPreKey()
        if current == nil || now - current!.createdAt > Self.signedPreKeyLifetime {
            let id = ((current?.id ?? 0) % 0xFF_FFFF) + 1
            let record = try context.generateSignedPreKey(identity: try store.ownDevice()!.identity, id: id, timestamp: UInt64(now))
            try store.database.write { () throws(SQLiteError) in try store.storeSignedPreKey(id, record: record) }
            try store.purgeSignedPreKeys(olderThan: Self.oldKeyGrace, except: id)
        }
        try store.purgeUsedPreKeys(olderThan: Self.oldKeyGrace)
        let unused = try store.unusedPreKeys().count
        if unused < Self.preKeyCount {
            var start = try store.highestPreKeyID() + 1
            if start + UInt32(Self.preKeyCount) >= 0xFF_FFFF { start = 1 }
            let records = try context.generatePreKeys(start: start, count: Self.preKeyCount - unused)
            try store.database.write { () throws(SQLiteError) in
                for (id, record) in records { try store.storePreKey(id, record: record) }
            }
        }
    }

    // MARK: - Decrypting

    /// Decrypts an `<encrypted/>` element sent by `sender` (bare JID) and addressed to `recipient` (the bare
    /// JID whose keys to use: the account). Returns the result and the token of the ratchet change set, which
    /// the caller passes to `commit(through:)` once the archive committed the outcome (or to nothing: a
    /// failure changes no state).
    public func decrypt(_ element: OMEMOEncryptedElement, sender: String, recipient: String) -> (Result<OMEMODecrypted, OMEMODecryptionFailure>, token: UInt64) {
        locked {
            store.beginChangeSet()
            let result = decryptLocked(element, sender: sender.lowercased(), recipient: recipient.lowercased())
            let token = store.endChangeSet(keep: (try? result.get()) != nil || result == .failure(.payloadAuthentication))
            return (result, token)
        }
    }

    private func decryptLocked(_ element: OMEMOEncryptedElement, sender: String, recipient: String) -> Result<OMEMODecrypted, OMEMODecryptionFailure> {
        let namespace = element.namespace
        guard let key = element.keys.first(where: { $0.device == deviceID && ($0.jid == nil || $0.jid!.lowercased() == recipient) }) else {
            return .failure(.notForThisDevice)
        }
        guard let bridge = bridges[namespace] else { return .failure(.malformed("unknown namespace")) }
        let material: [UInt8]
        do {
            material = try context.decryptKey(key.data, isKeyExchange: key.isKeyExchange, namespace: namespace, sender: sender,
                                              senderDevice: element.senderDevice, store: bridge.handle!)
        } catch {
            if let storeError = bridge.lastError {
                bridge.lastError = nil
                return .failure(.store("\(storeError)"))
            }
            return .failure(error)
        }
        let identity: (fingerprint: String, trust: OMEMOTrust)
        do {
            identity = try recordSenderIdentity(namespace: namespace, jid: sender, device: element.senderDevice)
        } catch {
            return .failure(.store("\(error)"))
        }
        guard let payload = element.payload else {
            return .success(OMEMODecrypted(plaintext: nil, senderDevice: element.senderDevice, fingerprint: identity.fingerprint, trust: identity.trust))
        }
        guard let plaintext = PayloadCrypto.open(payload, keyMaterial: material, iv: element.iv, namespace: namespace) else {
            return .failure(.payloadAuthentication)
        }
        return .success(OMEMODecrypted(plaintext: plaintext, senderDevice: element.senderDevice, fingerprint: identity.fingerprint, trust: identity.trust))
    }

    private func recordSenderIdentity(namespace: OMEMONamespace, jid: String, device: UInt32) throws -> (fingerprint: String, trust: OMEMOTrust) {
        guard let record = try store.loadSession(namespace: namespace.rawValue, jid: jid, device: device),
              let identity = try context.remoteIdentity(sessionRecord: record) else {
            throw OMEMOError.noSession(jid: jid, device: device)
        }
        let fingerprint = try context.fingerprint(ofSerializedKey: identity)
        let trust = try store.recordIdentity(jid: jid, device: device, identity: identity, fingerprint: fingerprint)
        return (fingerprint, trust)
    }

    /// Writes the ratchet state of every decryption up to `token` (call after the archive committed them).
    public func commit(through token: UInt64) throws(OMEMOError) {
        lock.lock()
        var failure: OMEMOError?
        do { try store.commit(through: token) } catch { failure = error }
        let changed = replacePendingStateChange()
        lock.unlock()
        changed.fulfil(())
        if let failure { throw failure }
    }

    /// Drops the state of decryptions whose messages did not reach the archive (an archive commit failed).
    public func discardPending() {
        let changed = locked { () -> OneShot<Void> in
            store.discardPending()
            return replacePendingStateChange()
        }
        changed.fulfil(())
    }

    /// Fulfilled (on the thread that commits) when pending state is next written or dropped: an encryption refused
    /// as `.busy` is then worth trying again. Take it before the `encrypt` that may be `.busy`, so a change between
    /// the two is not missed. No timer, no polling.
    public var nextPendingStateChange: OneShot<Void> { locked { pendingStateChange } }

    /// Called with `lock` held: the wake-up to fulfil once the lock is released.
    private func replacePendingStateChange() -> OneShot<Void> {
        defer { pendingStateChange = OneShot() }
        return pendingStateChange
    }

    /// Ratchet state waiting for the archive (for tests and status).
    public var hasPendingState: Bool { locked { store.hasPendingState } }

    // MARK: - Sessions and encrypting

    public func hasSession(namespace: OMEMONamespace, jid: String, device: UInt32) -> Bool {
        locked { (try? store.loadSession(namespace: namespace.rawValue, jid: jid.lowercased(), device: device)) != nil }
    }

    /// Starts a session with a device from its published bundle (one random one-time prekey is used).
    public func buildSession(namespace: OMEMONamespace, jid: String, device: UInt32, bundle: OMEMOBundle) throws(OMEMOError) {
        guard let bridge = bridges[namespace] else { throw .invalidBundle("unknown namespace") }
        do {
            try locked { () throws in
                try context.processBundle(bundle, namespace: namespace, jid: jid.lowercased(), device: device, store: bridge.handle!)
                if let record = try store.loadSession(namespace: namespace.rawValue, jid: jid.lowercased(), device: device),
                   let identity = try context.remoteIdentity(sessionRecord: record) {
                    _ = try store.recordIdentity(jid: jid, device: device, identity: identity,
                                                 fingerprint: try context.fingerprint(ofSerializedKey: identity))
                }
            }
        } catch let error as OMEMOError {
            throw error
        } catch {
            throw .store("\(error)")
        }
    }

    /// Encrypts `plaintext` (OMEMO 0.3: the body; OMEMO 2: the XEP-0420 envelope) for the given devices, all
    /// of which must have sessions. Each advanced sending chain is saved before this returns, so a crash can
    /// never make Roost reuse a message key.
    public func encrypt(_ plaintext: [UInt8], namespace: OMEMONamespace, for recipients: [(jid: String, device: UInt32)]) throws(OMEMOError) -> OMEMOEncryptedElement {
        guard let bridge = bridges[namespace] else { throw .invalidBundle("unknown namespace") }
        do {
            return try locked { () throws -> OMEMOEncryptedElement in
                // Encrypting on top of state that waits for the archive would save that state early.
                if recipients.contains(where: { store.isPending(.session(namespace: namespace.rawValue, jid: $0.jid.lowercased(), device: $0.device)) }) {
                    throw OMEMOError.busy
                }
                guard let sealed = PayloadCrypto.seal(plaintext, namespace: namespace) else {
                    throw OMEMOError.library("payload encryption failed", code: SG_ERR_UNKNOWN)
                }
                var keys: [OMEMOKeyElement] = []
                try store.database.write { () throws(SQLiteError) in
                    for recipient in recipients {
                        let jid = recipient.jid.lowercased()
                        do {
                            let (data, exchange) = try context.encryptKey(sealed.keyMaterial, namespace: namespace, jid: jid,
                                                                          device: recipient.device, store: bridge.handle!)
                            keys.append(OMEMOKeyElement(jid: namespace == .omemo2 ? jid : nil, device: recipient.device,
                                                        isKeyExchange: exchange, data: data))
                        } catch {
                            if let storeError = bridge.lastError { bridge.lastError = nil; throw storeError }
                            throw SQLiteError(code: 1, message: "\(error)")
                        }
                    }
                }
                return OMEMOEncryptedElement(namespace: namespace, senderDevice: deviceID, keys: keys, iv: sealed.iv,
                                             payload: sealed.ciphertext)
            }
        } catch let error as OMEMOError {
            throw error
        } catch {
            throw .store("\(error)")
        }
    }

    // MARK: - Trust and device lists

    public func identities(of jid: String?) -> [OMEMOIdentity] {
        let all = locked { (try? store.identities(jid: jid)) ?? [] }
        return all.map { var identity = $0; identity.own = identity.jid == account && identity.device == deviceID; return identity }
    }

    /// Sets the trust of `jid`'s identities whose fingerprint matches (Curve25519 or Ed25519 hex, spaces and
    /// case ignored); returns how many identities changed.
    public func setTrust(jid: String, fingerprint: String, to trust: OMEMOTrust) throws(OMEMOError) -> Int {
        let wanted = fingerprint.lowercased().filter(\.isHexDigit)
        do {
            return try locked { () throws -> Int in
                var matches: [String] = []
                for identity in try store.identities(jid: jid) {
                    if identity.fingerprint == wanted { matches.append(identity.fingerprint); continue }
                    if let latest = try store.latestIdentity(jid: jid, device: identity.device), latest.fingerprint == identity.fingerprint,
                       try context.edwardsForm(ofSerializedKey: latest.identity).hex == wanted {
                        matches.append(identity.fingerprint)
                    }
                }
                return try store.setTrust(jid: jid, fingerprints: matches, to: trust)
            }
        } catch {
            throw .store("\(error)")
        }
    }

    public func trust(jid: String, device: UInt32) -> OMEMOTrust? {
        locked { (try? store.latestIdentity(jid: jid, device: device))?.trust }
    }

    /// Remembers the device list a contact (or the account) published.
    public func updateDeviceList(namespace: OMEMONamespace, jid: String, devices: [UInt32]) {
        locked { try? store.replaceDeviceList(namespace: namespace.rawValue, jid: jid, devices: devices) }
    }

    public func activeDevices(namespace: OMEMONamespace, jid: String) -> [UInt32] {
        locked { (try? store.activeDevices(namespace: namespace.rawValue, jid: jid)) ?? [] }
    }
}

extension Array where Element == UInt8 {
    var hex: String { map { String(format: "%02x", $0) }.joined() }
}
