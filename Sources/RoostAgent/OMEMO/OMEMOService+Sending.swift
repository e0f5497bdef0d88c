import RoostCore
import Foundation
import RoostArchive
import RoostNotify
import RoostOMEMO
import RoostXMPP

extension OMEMOService {
    /// An encrypted message ready to send, and how to archive it.
    struct Outgoing {
        var message: Message
        var encryption: MessageEncryption
        var recipients: Int
    }

    /// Encrypts `body` for every trusted device of `contact` and of the account (Roost's own device aside), in
    /// the namespace the conversation uses (`preferred`, else OMEMO 2 when the contact has OMEMO 2 devices,
    /// else 0.3). Sessions are started from bundles where needed.
    func encrypt(_ body: String, to contact: JID, id: String, preferred: OMEMONamespace?, client: XMPPClient) async throws(ActionFailure) -> Outgoing {
        try await encrypt(body, to: contact, type: .chat, readers: [contact.bare], id: id, preferred: preferred, client: client)
    }

    /// The same for a group chat (`type` groupchat, `destination` the room): `readers` are the members' real JIDs
    /// whose devices it is encrypted for (each needs a trusted device, or it is refused naming them).
    func encrypt(_ body: String, to destination: JID, type: Message.Kind, readers: [JID], id: String, preferred: OMEMONamespace?,
                 client: XMPPClient) async throws(ActionFailure) -> Outgoing {
        var lists: [JID: [OMEMONamespace: [UInt32]]] = [:]
        for reader in readers {
            for namespace in OMEMONamespace.allCases {
                lists[reader, default: [:]][namespace] = (try? await deviceList(of: reader, namespace, client: client)) ?? []
            }
        }
        let speaksAll = { (namespace: OMEMONamespace) in readers.allSatisfy { lists[$0]?[namespace]?.isEmpty == false } }
        let namespace = preferred.flatMap { speaksAll($0) ? $0 : nil } ?? (speaksAll(.omemo2) ? .omemo2 : .legacy)
        let silent = readers.filter { lists[$0]?[namespace]?.isEmpty != false }
        guard silent.isEmpty, !readers.isEmpty else {
            let who = readers.isEmpty ? "nobody in \(destination) shows a real JID (OMEMO needs a non-anonymous room)"
                : "\(silent.map(\.description).joined(separator: ", ")) \(silent.count == 1 ? "has" : "have") no OMEMO devices (no published device list)"
            throw ActionFailure(.notFound, "\(who); send with --plaintext to send unencrypted")
        }
        let ownDevices = ((try? await deviceList(of: account, namespace, client: client)) ?? []).filter { $0 != device.deviceID }
        var recipients: [(jid: String, device: UInt32)] = []
        var problems: [String] = []
        for (jid, devices) in readers.map({ ($0, lists[$0]?[namespace] ?? []) }) + [(account, ownDevices)] {
            for id in devices {
                if !device.hasSession(namespace: namespace, jid: jid.description, device: id) {
                    do {
                        let answer = try await client.request(OMEMO.itemsRequest(node: OMEMO.bundleNode(namespace, device: id), from: jid,
                                                                                  itemID: OMEMO.bundleItemID(namespace, device: id)))
                        guard let bundle = OMEMO.bundle(inItemsResult: answer, namespace) else { throw OMEMOError.invalidBundle("no bundle") }
                        try device.buildSession(namespace: namespace, jid: jid.description, device: id, bundle: bundle)
                    } catch {
                        problems.append("\(jid) device \(id): \(error)")
                        continue
                    }
                }
                guard device.trust(jid: jid.description, device: id)?.isTrusted == true else {
                    problems.append("\(jid) device \(id) is not trusted")
                    continue
                }
                recipients.append((jid.description, id))
            }
        }
        let unreachable = readers.filter { reader in !recipients.contains { $0.jid == reader.description } }
        guard unreachable.isEmpty else {
            let why = problems.isEmpty ? "" : " (\(problems.joined(separator: "; ")))"
            throw ActionFailure(.refused, "no trusted OMEMO device of \(unreachable.map(\.description).joined(separator: ", ")) could be reached\(why); trust one with `roost omemo trust`, or send with --plaintext")
        }
        for problem in problems { log.info("\(account): not encrypting for \(LogText.quote(problem))") }
        let plaintext = namespace == .omemo2
            ? StanzaContentEncryption.envelope(body: body, from: account, to: destination.bare)
            : Array(body.utf8)
        var element: OMEMOEncryptedElement?
        // A session whose state still waits for the archive commit of an incoming message is busy for a moment:
        // woken when the device writes or drops pending state (the wake-up taken before trying), at most 5 s in all.
        // After a timeout the task awaiting the wake-up ends with that commit or drop, which pending state makes certain.
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
            let changed = device.nextPendingStateChange
            do {
                element = try device.encrypt(plaintext, namespace: namespace, for: recipients)
                break
            } catch .busy {
                let left = Int((deadline - ContinuousClock.now).components.seconds) + 1
                guard await Deadline.race(seconds: left, timedOut: false, start: { once in
                    Task { await changed.value; once.fulfil(true) }
                }) else { break }
            } catch {
                throw ActionFailure(.internalError, "encrypting for \(destination.bare): \(error)")
            }
        }
        guard let element else { throw ActionFailure(.internalError, "encrypting for \(destination.bare): the OMEMO state stayed busy") }
        let encryption = MessageEncryption(protocolNamespace: namespace.rawValue, senderDevice: Int64(device.deviceID),
                                           fingerprint: device.fingerprint, trust: OMEMOTrust.verified.rawValue)
        return Outgoing(message: OMEMO.message(to: destination.bare, type: type, id: id, encrypted: element), encryption: encryption,
                        recipients: recipients.count)
    }
}
