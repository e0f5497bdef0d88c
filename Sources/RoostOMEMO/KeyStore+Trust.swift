import RoostCore
import RoostArchive

/// Trust in a device's identity key.
///
/// Blind trust before verification (as Conversations and Dino do it): a contact's devices are trusted as they
/// appear (`blind`) until the user verifies one of that contact's fingerprints; from then on a new device of
/// that contact starts `untrusted` until verified. `distrusted` is the user's explicit no.
public enum OMEMOTrust: String, Sendable, Codable, CaseIterable {
    case blind, verified, untrusted, distrusted

    /// Messages are encrypted for trusted devices only; messages from others are archived, marked untrusted.
    public var isTrusted: Bool { self == .blind || self == .verified }

    /// How the archive and notifications show it.
    public var label: String {
        switch self {
        case .blind: "trusted (not verified)"
        case .verified: "verified"
        case .untrusted: "untrusted"
        case .distrusted: "distrusted"
        }
    }
}

/// One known device identity of a contact (or of the user's own account).
public struct OMEMOIdentity: Sendable, Equatable {
    public var jid: String
    public var device: UInt32
    /// Hex of the 32-byte Curve25519 identity key, as Conversations, Dino and Gajim show it.
    public var fingerprint: String
    public var trust: OMEMOTrust
    public var firstSeen: Int64
    public var lastSeen: Int64
    /// Whether the device is in the contact's published device list (any namespace).
    public var active: Bool
    /// The namespaces whose device list names the device.
    public var namespaces: [String]
    /// True for Roost's own device.
    public var own: Bool = false
}

extension KeyStore {
    /// Records that `jid`'s device presented this identity key; returns its trust.
    func recordIdentity(jid: String, device: UInt32, identity: [UInt8], fingerprint: String) throws(SQLiteError) -> OMEMOTrust {
        let jid = jid.lowercased()
        let now = Timestamp.now()
        if let existing = try trust(jid: jid, device: device, fingerprint: fingerprint) {
            try database.run("UPDATE identities SET last_seen = ? WHERE account = ? AND jid = ? AND device = ? AND fingerprint = ?",
                             [.integer(now), .text(account), .text(jid), .integer(Int64(device)), .text(fingerprint)])
            return existing
        }
        // A fingerprint the user already judged on another device id keeps that judgement.
        let known = try database.cached("SELECT trust FROM identities WHERE account = ? AND jid = ? AND fingerprint = ? LIMIT 1")
        var inherited: OMEMOTrust?
        try known.forEachRow([.text(account), .text(jid), .text(fingerprint)]) { row in
            inherited = OMEMOTrust(rawValue: row.text(0))
            return false
        }
        let verifiedOne = try database.cached("SELECT 1 FROM identities WHERE account = ? AND jid = ? AND trust = 'verified' LIMIT 1")
            .scalarInt([.text(account), .text(jid)]) != nil
        let trust = inherited ?? (verifiedOne ? .untrusted : .blind)
        try database.run("""
            INSERT INTO identities (account, jid, device, fingerprint, identity, trust, first_seen, last_seen)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """, [.text(account), .text(jid), .integer(Int64(device)), .text(fingerprint), .blob(identity), .text(trust.rawValue),
                  .integer(now), .integer(now)])
        return trust
    }

    func trust(jid: String, device: UInt32, fingerprint: String) throws(SQLiteError) -> OMEMOTrust? {
        var found: OMEMOTrust?
        try database.cached("SELECT trust FROM identities WHERE account = ? AND jid = ? AND device = ? AND fingerprint = ?")
            .forEachRow([.text(account), .text(jid.lowercased()), .integer(Int64(device)), .text(fingerprint)]) { row in
                found = OMEMOTrust(rawValue: row.text(0))
                return false
            }
        return found
    }

    /// The identity key a device presented most recently.
    func latestIdentity(jid: String, device: UInt32) throws(SQLiteError) -> (identity: [UInt8], fingerprint: String, trust: OMEMOTrust)? {
        var found: ([UInt8], String, OMEMOTrust)?
        try database.cached("""
            SELECT identity, fingerprint, trust FROM identities WHERE account = ? AND jid = ? AND device = ?
            ORDER BY last_seen DESC LIMIT 1
            """).forEachRow([.text(account), .text(jid.lowercased()), .integer(Int64(device))]) { row in
            found = (row.optionalBlob(0) ?? [], row.text(1), OMEMOTrust(rawValue: row.text(2)) ?? .untrusted)
            return false
        }
        return found
    }

    /// Sets the trust of every identity of `jid` whose fingerprint is one of `fingerprints`; returns how many.
    func setTrust(jid: String, fingerprints: [String], to trust: OMEMOTrust) throws(SQLiteError) -> Int {
        var changed = 0
        try database.write { () throws(SQLiteError) in
            for fingerprint in fingerprints {
                try database.run("UPDATE identities SET trust = ? WHERE account = ? AND jid = ? AND fingerprint = ?",
                                 [.text(trust.rawValue), .text(account), .text(jid.lowercased()), .text(fingerprint)])
                changed += Int(database.changes)
            }
        }
        return changed
    }

    func identities(jid: String?) throws(SQLiteError) -> [OMEMOIdentity] {
        var result: [OMEMOIdentity] = []
        let sql = """
            SELECT i.jid, i.device, i.fingerprint, i.trust, i.first_seen, i.last_seen,
                   (SELECT group_concat(d.namespace, ' ') FROM devices d
                    WHERE d.account = i.account AND d.jid = i.jid AND d.device = i.device AND d.active = 1)
            FROM identities i WHERE i.account = ?1 AND (?2 IS NULL OR i.jid = ?2)
            ORDER BY i.jid, i.device, i.last_seen DESC
            """
        try database.cached(sql).forEachRow([.text(account), SQLValue(jid?.lowercased())]) { row in
            let namespaces = row.optionalText(6).map { $0.split(separator: " ").map(String.init).sorted() } ?? []
            result.append(OMEMOIdentity(jid: row.text(0), device: UInt32(truncatingIfNeeded: row.int(1)), fingerprint: row.text(2),
                                        trust: OMEMOTrust(rawValue: row.text(3)) ?? .untrusted, firstSeen: row.int(4),
                                        lastSeen: row.int(5), active: !namespaces.isEmpty, namespaces: namespaces))
            return true
        }
        return result
    }

    // MARK: Device lists (as last published by each contact)

    func replaceDeviceList(namespace: String, jid: String, devices: [UInt32]) throws(SQLiteError) {
        let jid = jid.lowercased()
        try database.write { () throws(SQLiteError) in
            try database.run("UPDATE devices SET active = 0, updated_at = ? WHERE account = ? AND namespace = ? AND jid = ?",
                             [.integer(Timestamp.now()), .text(account), .text(namespace), .text(jid)])
            for device in devices {
                try database.run("""
                    INSERT INTO devices (account, namespace, jid, device, active, updated_at) VALUES (?, ?, ?, ?, 1, ?)
                    ON CONFLICT (account, namespace, jid, device) DO UPDATE SET active = 1, updated_at = excluded.updated_at
                    """, [.text(account), .text(namespace), .text(jid), .integer(Int64(device)), .integer(Timestamp.now())])
            }
        }
    }

    func activeDevices(namespace: String, jid: String) throws(SQLiteError) -> [UInt32] {
        var devices: [UInt32] = []
        try database.cached("SELECT device FROM devices WHERE account = ? AND namespace = ? AND jid = ? AND active = 1 ORDER BY device")
            .forEachRow([.text(account), .text(namespace), .text(jid.lowercased())]) { row in
                devices.append(UInt32(truncatingIfNeeded: row.int(0)))
                return true
            }
        return devices
    }
}
