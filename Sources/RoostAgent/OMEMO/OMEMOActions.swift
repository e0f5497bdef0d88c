import Foundation
import RoostArchive
import RoostOMEMO
import RoostXMPP

extension ActionContext {
    func omemoService() throws(ActionFailure) -> OMEMOService {
        guard let omemo else { throw ActionFailure(.config, "OMEMO is off for \(account) (set `omemo = on` in its [account] group)") }
        return omemo
    }
}

/// `omemo.fingerprints`: Roost's own device, the account's other devices and (with a JID) a contact's, with
/// fingerprints and trust. The device lists named are read from the server first.
public struct OMEMOFingerprintsAction: AccountAction {
    public static let command = "omemo.fingerprints"
    public var jid: String?

    public init(jid: String?) { self.jid = jid }

    public struct Device: Codable, Sendable, Equatable {
        public var jid: String
        public var device: UInt32
        /// Hex of the Curve25519 identity key; nil when the device's bundle could not be read.
        public var fingerprint: String?
        public var trust: String?
        /// Listed in the account's published device list (0.3 and/or 2).
        public var namespaces: [String]
        public var own: Bool
    }

    public func perform(in context: ActionContext) async throws(ActionFailure) -> [Device] {
        let omemo = try context.omemoService()
        var jids = [context.account]
        if let jid { jids.append(try JIDArgument.bare(jid)) }
        var devices: [Device] = []
        for jid in jids {
            var listed: [UInt32: [String]] = [:]
            for namespace in OMEMONamespace.allCases {
                let ids = (try? await omemo.deviceList(of: jid, namespace, client: context.client)) ?? []
                for id in ids {
                    listed[id, default: []].append(namespace.shortName)
                    // A device never heard from: its identity comes from its bundle.
                    if omemo.device.trust(jid: jid.description, device: id) == nil, id != omemo.device.deviceID {
                        try? await omemo.learnIdentity(of: jid, device: id, namespace: namespace, client: context.client)
                    }
                }
            }
            let known = omemo.device.identities(of: jid.description)
            for identity in known {
                devices.append(Device(jid: identity.jid, device: identity.device, fingerprint: identity.fingerprint,
                                      trust: identity.trust.rawValue, namespaces: listed[identity.device] ?? [], own: identity.own))
            }
            for (id, namespaces) in listed where !known.contains(where: { $0.device == id }) {
                devices.append(Device(jid: jid.description, device: id, fingerprint: nil, trust: nil, namespaces: namespaces, own: false))
            }
        }
        return devices
    }
}

/// `omemo.trust`: verify (`trust = true`) or distrust a device of `jid` by its fingerprint.
public struct OMEMOTrustAction: AccountAction {
    public static let command = "omemo.trust"
    public var jid: String
    public var fingerprint: String
    public var trust: Bool

    public init(jid: String, fingerprint: String, trust: Bool) {
        self.jid = jid
        self.fingerprint = fingerprint
        self.trust = trust
    }

    public func perform(in context: ActionContext) async throws(ActionFailure) -> ActionDone {
        let omemo = try context.omemoService()
        let contact = try JIDArgument.bare(jid)
        let wanted = fingerprint.filter(\.isHexDigit)
        guard wanted.count == 64 else {
            throw ActionFailure(.invalidArgument, "a fingerprint is 64 hex digits (spaces allowed); got \(wanted.count)")
        }
        let changed: Int
        do { changed = try omemo.device.setTrust(jid: contact.description, fingerprint: wanted, to: trust ? .verified : .distrusted) } catch {
            throw ActionFailure(.internalError, "\(error)")
        }
        guard changed > 0 else {
            throw ActionFailure(.notFound, "no device of \(contact) has fingerprint \(wanted); see `roost omemo fingerprints \(contact)`")
        }
        return ActionDone("\(contact): \(wanted) is now \(trust ? "verified" : "distrusted")")
    }
}

/// `omemo.retry`: tries again to decrypt the messages archived as undecryptable.
public struct OMEMORetryAction: AccountAction {
    public static let command = "omemo.retry"
    public init() {}

    public struct Summary: Codable, Sendable, Equatable {
        public var tried: Int
        public var decrypted: Int
    }

    public func perform(in context: ActionContext) async throws(ActionFailure) -> Summary {
        let omemo = try context.omemoService()
        guard let path = context.archivePath else { return Summary(tried: 0, decrypted: 0) }
        let rows: [ArchiveReader.UndecryptableMessage]
        do { rows = try ArchiveReader(path: path).undecryptableMessages(account: context.account.description) } catch {
            throw ActionFailure(.internalError, "reading the archive: \(error)")
        }
        var decrypted = 0
        for row in rows {
            guard let element = Element(parsing: row.rawStanza) else { continue }
            let message = Message(element)
            // In a room, the occupant's real JID owns the sessions (none known: cannot be decrypted).
            let sender: JID
            if row.direction == .outgoing { sender = context.account }
            else if let real = JID(parsing: row.realJid) { sender = real.bare }
            else if message.type == .groupchat { continue }
            else { sender = message.from?.bare ?? context.account }
            guard let (body, encryption, token) = omemo.retryDecrypt(message, sender: sender) else { continue }
            try await context.archive.record([.messageDecrypted(MessageDecryption(messageID: row.id, body: body, encryption: encryption))])
            omemo.committed(through: token)
            decrypted += 1
        }
        return Summary(tried: rows.count, decrypted: decrypted)
    }
}
