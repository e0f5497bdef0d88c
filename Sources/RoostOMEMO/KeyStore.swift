import RoostCore
import Foundation
import RoostArchive

/// The OMEMO key store: `omemo.sqlite` beside the archive (0600, WAL, `synchronous=FULL`), never exported.
///
/// # Ratchet state and the archive: the ordering guarantee
/// Decrypting advances a double ratchet, and a consumed message key cannot be derived again. The archive and
/// this store are two SQLite files, which no transaction spans (WAL mode makes even ATTACHed databases
/// commit separately). So the state a decryption produced is not written at once: it waits in memory, in a
/// *change set* numbered by `token`, and is written only after the archive transaction holding the decrypted
/// message has committed (`commit(through:)`). The ratchet state on disk therefore never runs ahead of the
/// archive; it may lag behind it (a crash between the two commits), which the protocol tolerates:
/// - the redelivered stanza (SM resume, MAM) is recognised as archived by its stanza-id / origin-id before any
///   decryption is tried, so the lost state is not needed for it;
/// - the next message of that chain is decrypted from the older state, and the double ratchet keeps the key
///   of the skipped (already archived) message as a skipped-message key — harmless;
/// - a PreKeySignalMessage whose session was not saved is simply processed again: one-time prekeys are marked
///   used, not deleted, so the repeated key exchange finds its key.
/// Reads see the newest state (open change set, then pending ones, then disk), so a flood decrypts in order
/// while earlier messages are still being committed. When an archive commit fails, every pending change set
/// is dropped (`discardPending`): the ratchet falls back to the last state whose messages are on disk.
///
/// Writes made outside a change set (generating keys, building a session from a bundle, encrypting) go to disk
/// at once, because a message key used to encrypt must never be used again after a crash.
final class KeyStore {
    let database: Database
    let account: String

    enum Key: Hashable {
        case session(namespace: String, jid: String, device: UInt32)
        case preKeyUsed(UInt32)
    }

    struct ChangeSet {
        var token: UInt64
        var writes: [Key: [UInt8]?] = [:]
        var order: [Key] = []

        mutating func set(_ key: Key, _ value: [UInt8]?) {
            if writes.updateValue(value, forKey: key) == nil { order.append(key) }
        }
    }

    private(set) var open: ChangeSet?
    private(set) var pending: [ChangeSet] = []
    private var nextToken: UInt64 = 1

    static let schema = """
        CREATE TABLE IF NOT EXISTS own_device (
            account TEXT PRIMARY KEY COLLATE NOCASE,
            device_id INTEGER NOT NULL,
            identity BLOB NOT NULL,
            created_at INTEGER NOT NULL
        );
        CREATE TABLE IF NOT EXISTS prekeys (
            account TEXT NOT NULL COLLATE NOCASE,
            id INTEGER NOT NULL,
            record BLOB NOT NULL,
            created_at INTEGER NOT NULL,
            used_at INTEGER,
            PRIMARY KEY (account, id)
        );
        CREATE TABLE IF NOT EXISTS signed_prekeys (
            account TEXT NOT NULL COLLATE NOCASE,
            id INTEGER NOT NULL,
            record BLOB NOT NULL,
            created_at INTEGER NOT NULL,
            PRIMARY KEY (account, id)
        );
        CREATE TABLE IF NOT EXISTS sessions (
            account TEXT NOT NULL COLLATE NOCASE,
            namespace TEXT NOT NULL,
            jid TEXT NOT NULL COLLATE NOCASE,
            device INTEGER NOT NULL,
            record BLOB NOT NULL,
            updated_at INTEGER NOT NULL,
            PRIMARY KEY (account, namespace, jid, device)
        );
        CREATE TABLE IF NOT EXISTS identities (
            account TEXT NOT NULL COLLATE NOCASE,
            jid TEXT NOT NULL COLLATE NOCASE,
            device INTEGER NOT NULL,
            fingerprint TEXT NOT NULL,
            identity BLOB NOT NULL,
            trust TEXT NOT NULL CHECK (trust IN ('blind', 'verified', 'untrusted', 'distrusted')),
            first_seen INTEGER NOT NULL,
            last_seen INTEGER NOT NULL,
            PRIMARY KEY (account, jid, device, fingerprint)
        );
        CREATE TABLE IF NOT EXISTS devices (
            account TEXT NOT NULL COLLATE NOCASE,
            namespace TEXT NOT NULL,
            jid TEXT NOT NULL COLLATE NOCASE,
            device INTEGER NOT NULL,
            active INTEGER NOT NULL,
            label TEXT,
            updated_at INTEGER NOT NULL,
            PRIMARY KEY (account, namespace, jid, device)
        );
        PRAGMA user_version = 1;
        """

    init(path: String, account: String) throws(OMEMOError) {
        do {
            let database = try Database(path: path, mode: .readWrite, synchronous: .full)
            try database.write { () throws(SQLiteError) in try database.execute(Self.schema) }
            self.database = database
        } catch {
            throw .store("cannot open the OMEMO key store \(path): \(error)")
        }
        self.account = account
    }

    // MARK: Change sets

    func beginChangeSet() {
        precondition(open == nil, "change sets do not nest")
        open = ChangeSet(token: nextToken)
        nextToken += 1
    }

    /// Closes the open change set; its writes wait until `commit(through:)` names its token.
    func endChangeSet(keep: Bool) -> UInt64 {
        guard let set = open else { return 0 }
        open = nil
        if keep && !set.order.isEmpty { pending.append(set) }
        return set.token
    }

    /// Writes every pending change set up to `token` (in order, in one transaction) and forgets them.
    func commit(through token: UInt64) throws(OMEMOError) {
        let ready = pending.prefix { $0.token <= token }
        guard !ready.isEmpty else { return }
        var merged = ChangeSet(token: token)
        for set in ready { for key in set.order { merged.set(key, set.writes[key]!) } }
        do {
            try database.write { () throws(SQLiteError) in
                for key in merged.order { try writeThrough(key, merged.writes[key]!) }
            }
        } catch {
            throw .store("cannot save the OMEMO ratchet state: \(error)")
        }
        pending.removeFirst(ready.count)
    }

    /// Forgets every pending change set: their messages did not reach the archive.
    func discardPending() { pending.removeAll() }

    var hasPendingState: Bool { !pending.isEmpty }

    func isPending(_ key: Key) -> Bool {
        pending.contains { $0.writes[key] != nil }
    }

    private func overlay(_ key: Key) -> [UInt8]?? {
        if let value = open?.writes[key] { return .some(value) }
        for set in pending.reversed() { if let value = set.writes[key] { return .some(value) } }
        return nil
    }

    private func record(_ key: Key, _ value: [UInt8]?) throws(SQLiteError) {
        if open != nil {
            open!.set(key, value)
        } else {
            try writeThrough(key, value)
        }
    }

    private func writeThrough(_ key: Key, _ value: [UInt8]?) throws(SQLiteError) {
        switch key {
        case .session(let namespace, let jid, let device):
            if let value {
                try database.run("""
                    INSERT INTO sessions (account, namespace, jid, device, record, updated_at) VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT (account, namespace, jid, device) DO UPDATE SET record = excluded.record, updated_at = excluded.updated_at
                    """, [.text(account), .text(namespace), .text(jid), .integer(Int64(device)), .blob(value), .integer(Timestamp.now())])
            } else {
                try database.run("DELETE FROM sessions WHERE account = ? AND namespace = ? AND jid = ? AND device = ?",
                                 [.text(account), .text(namespace), .text(jid), .integer(Int64(device))])
            }
        case .preKeyUsed(let id):
            try database.run("UPDATE prekeys SET used_at = coalesce(used_at, ?) WHERE account = ? AND id = ?",
                             [.integer(Timestamp.now()), .text(account), .integer(Int64(id))])
        }
    }

    // MARK: Sessions

    func loadSession(namespace: String, jid: String, device: UInt32) throws(SQLiteError) -> [UInt8]? {
        if let value = overlay(.session(namespace: namespace, jid: jid.lowercased(), device: device)) { return value }
        var found: [UInt8]?
        try database.cached("SELECT record FROM sessions WHERE account = ? AND namespace = ? AND jid = ? AND device = ?")
            .forEachRow([.text(account), .text(namespace), .text(jid), .integer(Int64(device))]) { row in
                found = row.optionalBlob(0)
                return false
            }
        return found
    }

    func storeSession(namespace: String, jid: String, device: UInt32, record value: [UInt8]?) throws(SQLiteError) {
        try record(.session(namespace: namespace, jid: jid.lowercased(), device: device), value)
    }

    func sessionDevices(namespace: String, jid: String) throws(SQLiteError) -> [UInt32] {
        var devices = Set<UInt32>()
        try database.cached("SELECT device FROM sessions WHERE account = ? AND namespace = ? AND jid = ?")
            .forEachRow([.text(account), .text(namespace), .text(jid)]) { row in
                devices.insert(UInt32(truncatingIfNeeded: row.int(0)))
                return true
            }
        for set in pending + (open.map { [$0] } ?? []) {
            for case .session(let ns, let j, let device) in set.order where ns == namespace && j == jid.lowercased() {
                if set.writes[.session(namespace: ns, jid: j, device: device)]! == nil { devices.remove(device) } else { devices.insert(device) }
            }
        }
        return devices.sorted()
    }

    // MARK: Own keys

    struct OwnDevice {
        var deviceID: UInt32
        var identity: [UInt8]
    }

    func ownDevice() throws(SQLiteError) -> OwnDevice? {
        var found: OwnDevice?
        try database.cached("SELECT device_id, identity FROM own_device WHERE account = ?").forEachRow([.text(account)]) { row in
            found = OwnDevice(deviceID: UInt32(truncatingIfNeeded: row.int(0)), identity: row.optionalBlob(1) ?? [])
            return false
        }
        return found
    }

    func saveOwnDevice(_ device: OwnDevice) throws(SQLiteError) {
        try database.run("INSERT INTO own_device (account, device_id, identity, created_at) VALUES (?, ?, ?, ?)",
                         [.text(account), .integer(Int64(device.deviceID)), .blob(device.identity), .integer(Timestamp.now())])
    }

    func loadPreKey(_ id: UInt32) throws(SQLiteError) -> [UInt8]? {
        var found: [UInt8]?
        try database.cached("SELECT record FROM prekeys WHERE account = ? AND id = ?").forEachRow([.text(account), .integer(Int64(id))]) { row in
            found = row.optionalBlob(0)
            return false
        }
        return found
    }

    func storePreKey(_ id: UInt32, record value: [UInt8]) throws(SQLiteError) {
        try database.run("""
            INSERT INTO prekeys (account, id, record, created_at) VALUES (?, ?, ?, ?)
            ON CONFLICT (account, id) DO UPDATE SET record = excluded.record, created_at = excluded.created_at, used_at = NULL
            """, [.text(account), .integer(Int64(id)), .blob(value), .integer(Timestamp.now())])
    }

    /// libomemo-c asks to delete a one-time prekey after its first key exchange. It is only marked used: a
    /// sender repeats the key exchange until it hears back, and a session whose state was not yet saved (see
    /// above) must be able to process it again. Used keys leave the published bundle and are deleted later.
    func markPreKeyUsed(_ id: UInt32) throws(SQLiteError) {
        try record(.preKeyUsed(id), [])
    }

    /// Unused prekeys, for the bundle (a key whose use waits in a change set counts as used).
    func unusedPreKeys() throws(SQLiteError) -> [(id: UInt32, record: [UInt8])] {
        var keys: [(UInt32, [UInt8])] = []
        try database.cached("SELECT id, record FROM prekeys WHERE account = ? AND used_at IS NULL ORDER BY id").forEachRow([.text(account)]) { row in
            let id = UInt32(truncatingIfNeeded: row.int(0))
            if overlay(.preKeyUsed(id)) == nil { keys.append((id, row.optionalBlob(1) ?? [])) }
            return true
        }
        return keys
    }

    func highestPreKeyID() throws(SQLiteError) -> UInt32 {
        UInt32(truncatingIfNeeded: try database.cached("SELECT max(id) FROM prekeys WHERE account = ?").scalarInt([.text(account)]) ?? 0)
    }

    /// Deletes prekeys used longer ago than `age` milliseconds.
    func purgeUsedPreKeys(olderThan age: Int64) throws(SQLiteError) {
        try database.run("DELETE FROM prekeys WHERE account = ? AND used_at IS NOT NULL AND used_at < ?",
                         [.text(account), .integer(Timestamp.now() - age)])
    }

    func loadSignedPreKey(_ id: UInt32) throws(SQLiteError) -> [UInt8]? {
        var found: [UInt8]?
        try database.cached("SELECT record FROM signed_prekeys WHERE account = ? AND id = ?").forEachRow([.text(account), .integer(Int64(id))]) { row in
            found = row.optionalBlob(0)
            return false
        }
        return found
    }

    func storeSignedPreKey(_ id: UInt32, record value: [UInt8]) throws(SQLiteError) {
        try database.run("""
            INSERT INTO signed_prekeys (account, id, record, created_at) VALUES (?, ?, ?, ?)
            ON CONFLICT (account, id) DO UPDATE SET record = excluded.record
            """, [.text(account), .integer(Int64(id)), .blob(value), .integer(Timestamp.now())])
    }

    func removeSignedPreKey(_ id: UInt32) throws(SQLiteError) {
        try database.run("DELETE FROM signed_prekeys WHERE account = ? AND id = ?", [.text(account), .integer(Int64(id))])
    }

    /// The newest signed prekey: id and creation time.
    func currentSignedPreKey() throws(SQLiteError) -> (id: UInt32, createdAt: Int64)? {
        var found: (UInt32, Int64)?
        try database.cached("SELECT id, created_at FROM signed_prekeys WHERE account = ? ORDER BY created_at DESC, id DESC LIMIT 1")
            .forEachRow([.text(account)]) { row in
                found = (UInt32(truncatingIfNeeded: row.int(0)), row.int(1))
                return false
            }
        return found
    }

    /// Signed prekeys older than the newest one by more than `age` ms (kept that long for late key exchanges).
    func purgeSignedPreKeys(olderThan age: Int64, except current: UInt32) throws(SQLiteError) {
        try database.run("DELETE FROM signed_prekeys WHERE account = ? AND id != ? AND created_at < ?",
                         [.text(account), .integer(Int64(current)), .integer(Timestamp.now() - age)])
    }
}
