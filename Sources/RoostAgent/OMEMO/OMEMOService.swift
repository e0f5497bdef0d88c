import RoostCore
import Foundation
import RoostArchive
import RoostOMEMO
import RoostXMPP
import Synchronization

/// Roost as one of the account's OMEMO devices: publishes the device and its bundles, decrypts what arrives
/// for it (live, carbons, server archive) for the router, and encrypts what `roost send` sends.
///
/// # Nothing lost
/// - Before decrypting, a message already in the archive (trusted stanza-id, or origin-id) or already on its way
///   there (decrypted, not yet committed) is recognised and skipped: a redelivered copy never touches the ratchet.
/// - The ratchet state a decryption produced is saved only after the archive committed its message
///   (`committed(through:)`, called by the session on its actor when the archive writer's "committed" message
///   arrives; see `KeyStore` in RoostOMEMO for why the order is archive first, then ratchet, and why a crash
///   between the two loses nothing).
final class OMEMOService: Sendable {
    let device: OMEMODevice
    let account: JID
    private let reader: ArchiveReader?
    let log: Logger
    private struct State {
        /// The newest change-set token handed out by decryptions and not yet taken by the session.
        var untakenToken: UInt64 = 0
        /// Dedup keys of messages decrypted but not yet committed, by token.
        var inFlight: [UInt64: [String]] = [:]
        var bundleStale = false
        var publishing = false
        /// The device's bundles and device lists were published in this run (`roost status`).
        var published = false
    }
    private let state = Mutex(State())

    init(account: JID, dataDirectory: String, archivePath: String, log: Logger) throws(OMEMOError) {
        device = try OMEMODevice(storePath: dataDirectory + "/omemo.sqlite", account: account.bare.description)
        self.account = account.bare
        reader = try? ArchiveReader(path: archivePath)
        self.log = log
    }

    // MARK: - Decrypting (called by the router, on the session's actor)

    /// The router's capability: what an `<encrypted/>` message means.
    var decryptor: StanzaRouter.Decryptor {
        { [self] input in decrypt(input) }
    }

    func decrypt(_ input: StanzaRouter.EncryptedInput) -> StanzaRouter.DecryptionOutcome {
        let keys = dedupKeys(input)
        let seen = state.withLock { state in keys.contains { key in state.inFlight.values.contains { $0.contains(key) } } }
        if seen || isArchived(input) {
            log.debug("\(account): not decrypting a copy of \(seen ? "a message being archived" : "an archived message") from \(LogText.quote(input.sender)) (id \(LogText.quote(input.message.id ?? "-")))")
            return .skip("already archived")
        }
        guard let element = OMEMO.encrypted(in: input.message) else {
            return .undecryptable(MessageEncryption(protocolNamespace: nil, failure: "malformed encrypted element"))
        }
        let (result, token) = device.decrypt(element, sender: input.sender.bare.description, recipient: account.description)
        let base = MessageEncryption(protocolNamespace: element.namespace.rawValue, senderDevice: Int64(element.senderDevice))
        switch result {
        case .success(let decrypted):
            state.withLock { state in
                state.untakenToken = max(state.untakenToken, token)
                state.inFlight[token, default: []] += keys
                if element.keys.contains(where: { $0.device == device.deviceID && $0.isKeyExchange }) { state.bundleStale = true }
            }
            var encryption = base
            encryption.fingerprint = decrypted.fingerprint
            encryption.trust = decrypted.trust.rawValue
            guard let plaintext = decrypted.plaintext else { return .skip("key transport") }
            if element.namespace == .omemo2 {
                guard let envelope = StanzaContentEncryption.parse(plaintext), let body = envelope.body else {
                    return .skip("OMEMO 2 envelope without a body")
                }
                // XEP-0420 §5: the envelope must name the stanza's sender, else it was replayed from elsewhere.
                if let from = envelope.from, from.bare != input.sender.bare {
                    encryption.failure = "the encrypted envelope names another sender (\(from))"
                    return .undecryptable(encryption)
                }
                return .decrypted(body: body, encryption)
            }
            return .decrypted(body: String(decoding: plaintext, as: UTF8.self), encryption)
        case .failure(.duplicate):
            // The ratchet never runs ahead of the archive, so a used key means this message is archived.
            log.info("\(account): an encrypted message from \(LogText.quote(input.sender)) (id \(LogText.quote(input.message.id ?? "-"))) reuses a message key: a copy, not archived again")
            return .skip("already decrypted")
        case .failure(let failure):
            if failure == .payloadAuthentication {
                state.withLock { $0.untakenToken = max($0.untakenToken, token) }
            }
            var encryption = base
            encryption.failure = failure.reason
            log.debug("\(account): an encrypted message from \(LogText.quote(input.sender)) could not be decrypted: \(LogText.quote(failure.reason))")
            return .undecryptable(encryption)
        }
    }

    /// The ratchet state to save once the events routed since the last call are committed (0: none).
    func takeToken() -> UInt64 {
        state.withLock { state in
            defer { state.untakenToken = 0 }
            return state.untakenToken
        }
    }

    /// The archive committed everything up to `token`: save the ratchet state that belongs to it.
    func committed(through token: UInt64) {
        guard token > 0 else { return }
        do {
            try device.commit(through: token)
        } catch {
            log.error("\(account): \(LogText.quote(error))")
        }
        state.withLock { state in
            for key in state.inFlight.keys where key <= token { state.inFlight[key] = nil }
        }
    }

    /// The archive gave up on a submission: forget the ratchet state of everything not yet committed.
    func commitFailed() {
        device.discardPending()
        state.withLock { $0.inFlight.removeAll() }
    }

    /// The archive writer's message about a submission whose routing took ratchet token `ratchet` (handled by the
    /// session, on its actor, in submission order): saves the ratchet
    /// state once the archive has the messages (or refused them for good: settled either way), drops it when
    /// the submission was abandoned (its stanzas come again), and republishes the bundles when a key exchange
    /// used up a one-time prekey.
    func archiveSettled(_ outcome: ArchiveWriter.Outcome, ratchet: UInt64, client: XMPPClient) {
        if case .abandoned = outcome {
            if ratchet > 0 { commitFailed() }
            return
        }
        committed(through: ratchet)
        let stale = state.withLock { state in
            defer { state.bundleStale = false }
            return state.bundleStale
        }
        if stale {
            Task {
                for namespace in OMEMONamespace.allCases { try? await self.publishBundle(namespace, client: client) }
            }
        }
    }

    private func dedupKeys(_ input: StanzaRouter.EncryptedInput) -> [String] {
        var keys: [String] = []
        if let id = input.stanzaID { keys.append("s|\(id)") }
        if let origin = input.message.stanzaIDs.originID {
            keys.append("o|\(input.conversation.description.lowercased())|\(input.direction.rawValue)|\(origin)")
        }
        return keys
    }

    private func isArchived(_ input: StanzaRouter.EncryptedInput) -> Bool {
        guard let reader else { return false }
        return (try? reader.containsMessage(account: account.description, conversation: input.conversation.description,
                                            direction: input.direction, trustedStanzaID: input.stanzaID,
                                            originID: input.message.stanzaIDs.originID)) ?? false
    }

    // MARK: - Publishing the device

    /// Roost's device id once its bundles and device lists were published in this run; nil before.
    var publishedDevice: UInt32? { state.withLock { $0.published } ? device.deviceID : nil }

    /// Adds Roost's device to the account's device lists (keeping the user's other devices) and publishes its
    /// bundles, in both namespaces. Failures are logged; the next login tries again.
    func publish(client: XMPPClient) async {
        guard state.withLock({ state in
            if state.publishing { return false }
            state.publishing = true
            return true
        }) else { return }
        defer { state.withLock { $0.publishing = false } }
        var published = true
        for namespace in OMEMONamespace.allCases {
            do {
                try await publishBundle(namespace, client: client)
                try await addToDeviceList(namespace, client: client)
            } catch {
                published = false
                // The connection ended meanwhile (a stop, a drop, already told): the next login publishes again.
                guard client.isConnected else {
                    log.debug("\(account): publishing the OMEMO device (\(namespace.shortName)) ended with the connection: \(LogText.quote(error))")
                    return
                }
                log.warning("\(account): publishing the OMEMO device (\(namespace.shortName)) failed: \(LogText.quote(error))")
            }
        }
        if published {
            state.withLock { $0.published = true }
            log.info("\(account): OMEMO device \(device.deviceID) published (fingerprint \(device.fingerprint))")
        }
    }

    func publishBundle(_ namespace: OMEMONamespace, client: XMPPClient) async throws {
        let bundle = try device.bundle(for: namespace)
        try await publish(node: OMEMO.bundleNode(namespace, device: device.deviceID),
                          itemID: OMEMO.bundleItemID(namespace, device: device.deviceID),
                          payload: OMEMO.bundleElement(namespace, bundle), options: OMEMO.publishOptions(forBundleOf: namespace), client: client)
    }

    /// Read-modify-publish of the device list under item id `current`; publishing again when the list changed
    /// meanwhile (another client published in between) until it holds Roost's device.
    private func addToDeviceList(_ namespace: OMEMONamespace, client: XMPPClient) async throws {
        for _ in 0..<3 {
            let current = try await deviceList(of: account, namespace, client: client)
            if current.contains(device.deviceID) { return }
            try await publish(node: OMEMO.deviceListNode(namespace), itemID: "current",
                              payload: OMEMO.deviceListElement(namespace, devices: current + [device.deviceID]),
                              options: OMEMO.deviceListOptions, client: client)
        }
        let final = try await deviceList(of: account, namespace, client: client)
        if !final.contains(device.deviceID) { throw OMEMOError.store("the device list keeps losing Roost's device") }
    }

    /// A contact's (or the account's) published device list; remembered for encrypting.
    func deviceList(of jid: JID, _ namespace: OMEMONamespace, client: XMPPClient) async throws -> [UInt32] {
        var devices: [UInt32] = []
        switch await Self.request(OMEMO.itemsRequest(node: OMEMO.deviceListNode(namespace), from: jid == account ? nil : jid), client) {
        case .success(let answer): devices = OMEMO.deviceList(inItemsResult: answer, namespace) ?? []
        case .failure(.stanzaError(let error)) where error.condition == "item-not-found": devices = []
        case .failure(let error): throw error
        }
        device.updateDeviceList(namespace: namespace, jid: jid.bare.description, devices: devices)
        return devices
    }

    /// Publish with publish-options; a node configured otherwise (`conflict` / `precondition-not-met`) is
    /// reconfigured and the item published again. A server that does not know one of the options (ejabberd
    /// 23.01 refuses `pubsub#max_items` in publish-options) gets them through the node's configuration instead
    /// — first, so that the user's other devices' items are never evicted by a node that keeps one item —
    /// and the item is published with the access model only.
    private func publish(node: String, itemID: String, payload: Element, options: [(String, String)], client: XMPPClient) async throws {
        let request = OMEMO.publishRequest(node: node, itemID: itemID, payload: payload, options: options)
        switch await Self.request(request, client) {
        case .success: return
        case .failure(.stanzaError(let error)) where error.condition == "conflict" || error.condition == "precondition-not-met":
            _ = try await client.request(OMEMO.configureRequest(node: node, options: options))
            _ = try await client.request(request)
        case .failure(.stanzaError(let error)) where options.count > 1:
            log.debug("\(account): the server refused publish-options for \(LogText.quote(node)) (\(LogText.quote(error))); configuring the node instead")
            try await configure(node: node, options: options, client: client)
            let basic = options.filter { $0.0 == "pubsub#access_model" }
            _ = try await client.request(OMEMO.publishRequest(node: node, itemID: itemID, payload: payload, options: basic))
        case .failure(let error): throw error
        }
    }

    /// Sets the node's configuration, creating the node with it when it does not exist yet; `max` for
    /// `pubsub#max_items` falls back to a large number where the server wants one.
    private func configure(node: String, options: [(String, String)], client: XMPPClient) async throws {
        let numeric = options.map { $0.0 == "pubsub#max_items" && $0.1 == "max" ? ($0.0, "1000") : $0 }
        for attempt in [options, numeric] {
            switch await Self.request(OMEMO.configureRequest(node: node, options: attempt), client) {
            case .success: return
            case .failure(.stanzaError(let error)) where error.condition == "item-not-found":
                if case .success = await Self.request(OMEMO.createRequest(node: node, options: attempt), client) { return }
            case .failure:
                continue
            }
        }
        throw OMEMOError.store("the server accepts neither the publish-options nor the configuration of \(node)")
    }

    static func request(_ iq: IQ, _ client: XMPPClient) async -> Result<IQ, ClientError> {
        do { return .success(try await client.request(iq)) } catch { return .failure(error) }
    }

    /// A device-list event from PEP: remember it; the account's own list without Roost's device is repaired.
    func deviceListChanged(jid: JID, namespace: OMEMONamespace, devices: [UInt32], client: XMPPClient) async {
        device.updateDeviceList(namespace: namespace, jid: jid.description, devices: devices)
        if jid.bare == account, !devices.contains(device.deviceID) {
            log.info("\(account): the OMEMO device list (\(namespace.shortName)) was republished without Roost's device; adding it again")
            try? await addToDeviceList(namespace, client: client)
        }
    }
}

extension OMEMOService {
    /// Reads a device's bundle to learn its identity key (for `roost omemo fingerprints`).
    func learnIdentity(of jid: JID, device id: UInt32, namespace: OMEMONamespace, client: XMPPClient) async throws {
        let answer = try await client.request(OMEMO.itemsRequest(node: OMEMO.bundleNode(namespace, device: id), from: jid,
                                                                  itemID: OMEMO.bundleItemID(namespace, device: id)))
        guard let bundle = OMEMO.bundle(inItemsResult: answer, namespace) else { return }
        try device.buildSession(namespace: namespace, jid: jid.description, device: id, bundle: bundle)
    }

    /// Decrypts an archived undecryptable message again (`roost omemo retry`): body, encryption and the ratchet
    /// token to commit once the archive took the body; nil when it still cannot be decrypted.
    func retryDecrypt(_ message: Message, sender: JID) -> (String, MessageEncryption, UInt64)? {
        guard let element = OMEMO.encrypted(in: message) else { return nil }
        let (result, token) = device.decrypt(element, sender: sender.description, recipient: account.description)
        guard case .success(let decrypted) = result, let plaintext = decrypted.plaintext else { return nil }
        let body: String
        if element.namespace == .omemo2 {
            guard let text = StanzaContentEncryption.parse(plaintext)?.body else { return nil }
            body = text
        } else {
            body = String(decoding: plaintext, as: UTF8.self)
        }
        return (body, MessageEncryption(protocolNamespace: element.namespace.rawValue, senderDevice: Int64(element.senderDevice),
                                        fingerprint: decrypted.fingerprint, trust: decrypted.trust.rawValue), token)
    }
}
