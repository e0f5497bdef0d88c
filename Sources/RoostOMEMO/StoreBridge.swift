internal import COMEMO
import RoostXMPP
import RoostArchive

/// Connects libomemo-c's store callbacks to a `KeyStore`, for one namespace: OMEMO 0.3 and OMEMO 2 sessions
/// with the same device are different ratchets, so each namespace gets its own store context (the identity
/// and prekeys are shared: one device, one identity, as slixmpp-omemo and Dino do it).
///
/// The callbacks run synchronously inside libomemo-c calls made by `OMEMODevice` under its lock.
final class StoreBridge {
    let store: KeyStore
    let namespace: String
    let identityPublic: [UInt8]
    let identityPrivate: [UInt8]
    let registrationID: UInt32
    /// The last SQLite failure inside a callback (libomemo-c only sees a negative code).
    var lastError: SQLiteError?
    private(set) var handle: OpaquePointer?

    init(store: KeyStore, namespace: String, identityPublic: [UInt8], identityPrivate: [UInt8], registrationID: UInt32,
         context: OpaquePointer) throws(OMEMOError) {
        self.store = store
        self.namespace = namespace
        self.identityPublic = identityPublic
        self.identityPrivate = identityPrivate
        self.registrationID = registrationID
        var created: OpaquePointer?
        guard signal_protocol_store_context_create(&created, context) == 0, let created else {
            throw .library("cannot create the store context", code: SG_ERR_NOMEM)
        }
        handle = created
        let me = Unmanaged.passUnretained(self).toOpaque()

        var sessions = signal_protocol_session_store()
        sessions.user_data = me
        sessions.load_session_func = { record, _, address, data in
            guard let address, let record else { return SG_ERR_INVAL }
            let bridge = StoreBridge.from(data)
            return bridge.guarded {
                guard let bytes = try bridge.store.loadSession(namespace: bridge.namespace, jid: StoreBridge.name(address),
                                                               device: UInt32(bitPattern: address.pointee.device_id)) else { return 0 }
                record.pointee = StoreBridge.buffer(bytes)
                return 1
            }
        }
        sessions.get_sub_device_sessions_func = { list, name, length, data in
            guard let list else { return SG_ERR_INVAL }
            let bridge = StoreBridge.from(data)
            return bridge.guarded {
                let jid = StoreBridge.string(name, length)
                let devices = try bridge.store.sessionDevices(namespace: bridge.namespace, jid: jid)
                let result = signal_int_list_alloc()
                for device in devices { signal_int_list_push_back(result, Int32(bitPattern: device)) }
                list.pointee = result
                return Int32(devices.count)
            }
        }
        sessions.store_session_func = { address, record, length, _, _, data in
            guard let address, let record else { return SG_ERR_INVAL }
            let bridge = StoreBridge.from(data)
            return bridge.guarded {
                try bridge.store.storeSession(namespace: bridge.namespace, jid: StoreBridge.name(address),
                                              device: UInt32(bitPattern: address.pointee.device_id),
                                              record: Array(UnsafeBufferPointer(start: record, count: length)))
                return 0
            }
        }
        sessions.contains_session_func = { address, data in
            guard let address else { return 0 }
            let bridge = StoreBridge.from(data)
            return bridge.guarded {
                try bridge.store.loadSession(namespace: bridge.namespace, jid: StoreBridge.name(address),
                                             device: UInt32(bitPattern: address.pointee.device_id)) != nil ? 1 : 0
            }
        }
        sessions.delete_session_func = { address, data in
            guard let address else { return 0 }
            let bridge = StoreBridge.from(data)
            return bridge.guarded {
                try bridge.store.storeSession(namespace: bridge.namespace, jid: StoreBridge.name(address),
                                              device: UInt32(bitPattern: address.pointee.device_id), record: nil)
                return 1
            }
        }
        sessions.delete_all_sessions_func = { name, length, data in
            let bridge = StoreBridge.from(data)
            return bridge.guarded {
                let jid = StoreBridge.string(name, length)
                let devices = try bridge.store.sessionDevices(namespace: bridge.namespace, jid: jid)
                for device in devices { try bridge.store.storeSession(namespace: bridge.namespace, jid: jid, device: device, record: nil) }
                return Int32(devices.count)
            }
        }
        signal_protocol_store_context_set_session_store(created, &sessions)

        var preKeys = signal_protocol_pre_key_store()
        preKeys.user_data = me
        preKeys.load_pre_key = { record, id, data in
            guard let record else { return SG_ERR_INVAL }
            let bridge = StoreBridge.from(data)
            return bridge.guarded {
                guard let bytes = try bridge.store.loadPreKey(id) else { return SG_ERR_INVALID_KEY_ID }
                record.pointee = StoreBridge.buffer(bytes)
                return 0
            }
        }
        preKeys.store_pre_key = { id, record, length, data in
            guard let record else { return SG_ERR_INVAL }
            let bridge = StoreBridge.from(data)
            return bridge.guarded {
                try bridge.store.storePreKey(id, record: Array(UnsafeBufferPointer(start: record, count: length)))
                return 0
            }
        }
        preKeys.contains_pre_key = { id, data in
            let bridge = StoreBridge.from(data)
            return bridge.guarded { try bridge.store.loadPreKey(id) != nil ? 1 : 0 }
        }
        preKeys.remove_pre_key = { id, data in
            let bridge = StoreBridge.from(data)
            return bridge.guarded {
                try bridge.store.markPreKeyUsed(id)
                return 0
            }
        }
        signal_protocol_store_context_set_pre_key_store(created, &preKeys)

        var signedPreKeys = signal_protocol_signed_pre_key_store()
        signedPreKeys.user_data = me
        signedPreKeys.load_signed_pre_key = { record, id, data in
            guard let record else { return SG_ERR_INVAL }
            let bridge = StoreBridge.from(data)
            return bridge.guarded {
                guard let bytes = try bridge.store.loadSignedPreKey(id) else { return SG_ERR_INVALID_KEY_ID }
                record.pointee = StoreBridge.buffer(bytes)
                return 0
            }
        }
        signedPreKeys.store_signed_pre_key = { id, record, length, data in
            guard let record else { return SG_ERR_INVAL }
            let bridge = StoreBridge.from(data)
            return bridge.guarded {
                try bridge.store.storeSignedPreKey(id, record: Array(UnsafeBufferPointer(start: record, count: length)))
                return 0
            }
        }
        signedPreKeys.contains_signed_pre_key = { id, data in
            let bridge = StoreBridge.from(data)
            return bridge.guarded { try bridge.store.loadSignedPreKey(id) != nil ? 1 : 0 }
        }
        signedPreKeys.remove_signed_pre_key = { id, data in
            let bridge = StoreBridge.from(data)
            return bridge.guarded {
                try bridge.store.removeSignedPreKey(id)
                return 0
            }
        }
        signal_protocol_store_context_set_signed_pre_key_store(created, &signedPreKeys)

        var identities = signal_protocol_identity_key_store()
        identities.user_data = me
        identities.get_identity_key_pair = { publicData, privateData, data in
            guard let publicData, let privateData else { return SG_ERR_INVAL }
            let bridge = StoreBridge.from(data)
            publicData.pointee = StoreBridge.buffer(bridge.identityPublic)
            privateData.pointee = StoreBridge.buffer(bridge.identityPrivate)
            return 0
        }
        identities.get_local_registration_id = { data, id in
            id?.pointee = StoreBridge.from(data).registrationID
            return 0
        }
        // Identities are recorded (with their trust) by `OMEMODevice` after each decryption; trust decides what
        // is encrypted to and how a message is marked, never whether an incoming message is read.
        identities.save_identity = { _, _, _, _ in 0 }
        identities.is_trusted_identity = { _, _, _, _ in 1 }
        signal_protocol_store_context_set_identity_key_store(created, &identities)
    }

    deinit {
        if let handle { signal_protocol_store_context_destroy(handle) }
    }

    static func from(_ data: UnsafeMutableRawPointer?) -> StoreBridge {
        Unmanaged<StoreBridge>.fromOpaque(data!).takeUnretainedValue()
    }

    /// Runs a store operation, turning an SQLite failure into a library error code (kept for the caller).
    func guarded(_ body: () throws -> Int32) -> Int32 {
        do {
            return try body()
        } catch let error as SQLiteError {
            lastError = error
        } catch {
            lastError = SQLiteError(code: 1, message: "\(error)")
        }
        return SG_ERR_MINIMUM - 1
    }

    static func name(_ address: UnsafePointer<signal_protocol_address>) -> String {
        string(address.pointee.name, address.pointee.name_len)
    }

    static func string(_ pointer: UnsafePointer<CChar>?, _ length: Int) -> String {
        guard let pointer, length > 0 else { return "" }
        return pointer.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
    }

    static func buffer(_ bytes: [UInt8]) -> OpaquePointer? {
        bytes.withUnsafeBufferPointer { signal_buffer_create($0.baseAddress, $0.count) }
    }
}
