import Foundation

/// The two OMEMO versions in use: 0.3 (what most clients still send) and OMEMO 2 (XEP-0384 0.8+).
public enum OMEMONamespace: String, Sendable, CaseIterable, Codable {
    case legacy = "eu.siacs.conversations.axolotl"
    case omemo2 = "urn:xmpp:omemo:2"

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

/// XEP-0384 OMEMO Encryption, both versions in use: 0.3 (`eu.siacs.conversations.axolotl`) and OMEMO 2
/// (`urn:xmpp:omemo:2`, 0.8+). Element builders and parsers only; the crypto is RoostOMEMO's.
///
/// PEP nodes (both published with `pubsub#access_model=open`: Prosody's PEP default is presence-only, and a
/// sender who is not a contact must still read them):
/// - 0.3: device list `eu.siacs.conversations.axolotl.devicelist` (item `current`), one bundle node per device
///   `eu.siacs.conversations.axolotl.bundles:<id>`;
/// - 2: device list `urn:xmpp:omemo:2:devices` (item `current`), all bundles in `urn:xmpp:omemo:2:bundles`
///   with the device id as item id (so that node needs `pubsub#max_items=max`).
public enum OMEMO {
    public static let eme = "urn:xmpp:eme:0"

    public static func deviceListNode(_ namespace: OMEMONamespace) -> String {
        namespace == .legacy ? "eu.siacs.conversations.axolotl.devicelist" : "urn:xmpp:omemo:2:devices"
    }

    public static func bundleNode(_ namespace: OMEMONamespace, device: UInt32) -> String {
        namespace == .legacy ? "eu.siacs.conversations.axolotl.bundles:\(device)" : "urn:xmpp:omemo:2:bundles"
    }

    public static func bundleItemID(_ namespace: OMEMONamespace, device: UInt32) -> String {
        namespace == .legacy ? "current" : String(device)
    }

    /// The `+notify` features that make the server send contacts' device list changes.
    public static let notifyFeatures = OMEMONamespace.allCases.map { deviceListNode($0) + "+notify" }

    /// The fallback body clients show when they cannot decrypt (and Roost never archives).
    public static let fallbackBody = "I sent you an OMEMO encrypted message but your client doesn't seem to support that."

    // MARK: - Encrypted messages

    /// The `<encrypted/>` element of a message, in either namespace (OMEMO 2 preferred when both are present).
    public static func encrypted(in message: Message) -> OMEMOEncryptedElement? {
        for namespace in [OMEMONamespace.omemo2, .legacy] {
            if let element = message.element.child("encrypted", namespace: namespace.rawValue) { return parse(element, namespace) }
        }
        return nil
    }

    /// Whether the message carries an `<encrypted/>` element at all (even a malformed one).
    public static func isEncrypted(_ message: Message) -> Bool {
        OMEMONamespace.allCases.contains { message.element.child("encrypted", namespace: $0.rawValue) != nil }
    }

    static func parse(_ element: Element, _ namespace: OMEMONamespace) -> OMEMOEncryptedElement? {
        guard let header = element.child("header", namespace: namespace.rawValue),
              let sid = header[attribute: "sid"].flatMap(UInt32.init) else { return nil }
        var keys: [OMEMOKeyElement] = []
        func key(_ key: Element, jid: String?) -> OMEMOKeyElement? {
            guard let rid = key[attribute: "rid"].flatMap(UInt32.init), let data = decode(key.text) else { return nil }
            let flag = key[attribute: namespace == .legacy ? "prekey" : "kex"]
            return OMEMOKeyElement(jid: jid, device: rid, isKeyExchange: flag == "true" || flag == "1", data: data)
        }
        if namespace == .legacy {
            keys = header.children("key", namespace: namespace.rawValue).compactMap { key($0, jid: nil) }
        } else {
            for group in header.children("keys", namespace: namespace.rawValue) {
                let jid = group[attribute: "jid"]
                keys += group.children("key", namespace: namespace.rawValue).compactMap { key($0, jid: jid) }
            }
        }
        let iv = header.child("iv", namespace: namespace.rawValue).flatMap { decode($0.text) }
        if namespace == .legacy && iv == nil { return nil }
        let payload = element.child("payload", namespace: namespace.rawValue).flatMap { decode($0.text) }
        return OMEMOEncryptedElement(namespace: namespace, senderDevice: sid, keys: keys, iv: iv, payload: payload)
    }

    public static func element(_ encrypted: OMEMOEncryptedElement) -> Element {
        let ns = encrypted.namespace.rawValue
        var header = Element("header", namespace: ns, attributes: [("sid", String(encrypted.senderDevice))])
        func key(_ key: OMEMOKeyElement) -> Element {
            var attributes = [("rid", String(key.device))]
            if key.isKeyExchange { attributes.append((encrypted.namespace == .legacy ? "prekey" : "kex", "true")) }
            return Element("key", namespace: ns, attributes: attributes, children: [.text(Data(key.data).base64EncodedString())])
        }
        if encrypted.namespace == .legacy {
            for k in encrypted.keys { header.append(key(k)) }
            if let iv = encrypted.iv { header.append(Element("iv", namespace: ns, text: Data(iv).base64EncodedString())) }
        } else {
            var order: [String] = []
            var groups: [String: [OMEMOKeyElement]] = [:]
            for k in encrypted.keys {
                let jid = k.jid ?? ""
                if groups[jid] == nil { order.append(jid) }
                groups[jid, default: []].append(k)
            }
            for jid in order {
                header.append(Element("keys", namespace: ns, attributes: [("jid", jid)], children: groups[jid]!.map { .element(key($0)) }))
            }
        }
        var element = Element("encrypted", namespace: ns, children: [.element(header)])
        if let payload = encrypted.payload {
            element.append(Element("payload", namespace: ns, text: Data(payload).base64EncodedString()))
        }
        return element
    }

    /// A chat message carrying `encrypted`, with the fallback body, EME (XEP-0380) and a store hint.
    public static func message(to: JID, type: Message.Kind = .chat, id: String, encrypted: OMEMOEncryptedElement) -> Message {
        var message = Message(to: to, type: type, body: fallbackBody, id: id)
        message.add(element(encrypted))
        message.add(Element("encryption", namespace: eme, attributes: [("namespace", encrypted.namespace.rawValue), ("name", "OMEMO")]))
        message.add(Element("store", namespace: Namespace.hints))
        message.add(StanzaIDs.originIDElement(id))
        return message
    }

    private static func decode(_ text: String) -> [UInt8]? {
        Data(base64Encoded: text.filter { !$0.isWhitespace }).map { Array($0) }
    }

    // MARK: - Device lists

    public static func deviceListElement(_ namespace: OMEMONamespace, devices: [UInt32], labels: [UInt32: String] = [:]) -> Element {
        let ns = namespace.rawValue
        let name = namespace == .legacy ? "list" : "devices"
        return Element(name, namespace: ns, children: devices.map { id in
            var attributes = [("id", String(id))]
            if namespace == .omemo2, let label = labels[id] { attributes.append(("label", label)) }
            return .element(Element("device", namespace: ns, attributes: attributes))
        })
    }

    /// The device ids in a device list payload (`<list/>` or `<devices/>`).
    public static func devices(in list: Element, _ namespace: OMEMONamespace) -> [UInt32] {
        list.children("device", namespace: namespace.rawValue).compactMap { $0[attribute: "id"].flatMap(UInt32.init) }
    }

    /// The device list in a pubsub items result (nil: no item, i.e. an empty list).
    public static func deviceList(inItemsResult iq: IQ, _ namespace: OMEMONamespace) -> [UInt32]? {
        guard let item = iq.element.child("pubsub", namespace: Namespace.pubsub)?.child("items", namespace: Namespace.pubsub)?
            .children("item", namespace: Namespace.pubsub).last else { return nil }
        let name = namespace == .legacy ? "list" : "devices"
        guard let list = item.child(name, namespace: namespace.rawValue) else { return [] }
        return devices(in: list, namespace)
    }

    /// A device list announced in a PEP event message: (publisher bare JID, namespace, devices).
    public static func deviceListEvent(in message: Message) -> (jid: JID, namespace: OMEMONamespace, devices: [UInt32])? {
        guard let event = message.element.child("event", namespace: Namespace.pubsubEvent),
              let items = event.child("items", namespace: Namespace.pubsubEvent), let node = items[attribute: "node"],
              let namespace = OMEMONamespace.allCases.first(where: { deviceListNode($0) == node }),
              let from = message.from?.bare else { return nil }
        let name = namespace == .legacy ? "list" : "devices"
        let list = items.children("item", namespace: Namespace.pubsubEvent).last?.child(name, namespace: namespace.rawValue)
        return (from, namespace, list.map { devices(in: $0, namespace) } ?? [])
    }

    // MARK: - Bundles

    public static func bundleElement(_ namespace: OMEMONamespace, _ bundle: OMEMOBundle) -> Element {
        let ns = namespace.rawValue
        func b64(_ bytes: [UInt8]) -> Node { .text(Data(bytes).base64EncodedString()) }
        typealias Node = Element.Node
        if namespace == .legacy {
            return Element("bundle", namespace: ns, children: [
                .element(Element("signedPreKeyPublic", namespace: ns, attributes: [("signedPreKeyId", String(bundle.signedPreKeyID))],
                                 children: [b64(bundle.signedPreKey)])),
                .element(Element("signedPreKeySignature", namespace: ns, children: [b64(bundle.signedPreKeySignature)])),
                .element(Element("identityKey", namespace: ns, children: [b64(bundle.identityKey)])),
                .element(Element("prekeys", namespace: ns, children: bundle.preKeys.map {
                    .element(Element("preKeyPublic", namespace: ns, attributes: [("preKeyId", String($0.id))], children: [b64($0.key)]))
                })),
            ])
        }
        return Element("bundle", namespace: ns, children: [
            .element(Element("spk", namespace: ns, attributes: [("id", String(bundle.signedPreKeyID))], children: [b64(bundle.signedPreKey)])),
            .element(Element("spks", namespace: ns, children: [b64(bundle.signedPreKeySignature)])),
            .element(Element("ik", namespace: ns, children: [b64(bundle.identityKey)])),
            .element(Element("prekeys", namespace: ns, children: bundle.preKeys.map {
                .element(Element("pk", namespace: ns, attributes: [("id", String($0.id))], children: [b64($0.key)]))
            })),
        ])
    }

    public static func bundle(in element: Element, _ namespace: OMEMONamespace) -> OMEMOBundle? {
        let ns = namespace.rawValue
        guard element.name == "bundle", element.namespace == ns else { return nil }
        let legacy = namespace == .legacy
        guard let spk = element.child(legacy ? "signedPreKeyPublic" : "spk", namespace: ns),
              let spkID = spk[attribute: legacy ? "signedPreKeyId" : "id"].flatMap(UInt32.init), let spkKey = decode(spk.text),
              let signature = element.child(legacy ? "signedPreKeySignature" : "spks", namespace: ns).flatMap({ decode($0.text) }),
              let identity = element.child(legacy ? "identityKey" : "ik", namespace: ns).flatMap({ decode($0.text) }) else { return nil }
        let preKeys = (element.child("prekeys", namespace: ns)?.children(legacy ? "preKeyPublic" : "pk", namespace: ns) ?? []).compactMap { pk -> OMEMOBundle.PreKey? in
            guard let id = pk[attribute: legacy ? "preKeyId" : "id"].flatMap(UInt32.init), let key = decode(pk.text) else { return nil }
            return OMEMOBundle.PreKey(id: id, key: key)
        }
        return OMEMOBundle(identityKey: identity, signedPreKeyID: spkID, signedPreKey: spkKey, signedPreKeySignature: signature, preKeys: preKeys)
    }

    /// The bundle in a pubsub items result.
    public static func bundle(inItemsResult iq: IQ, _ namespace: OMEMONamespace) -> OMEMOBundle? {
        guard let item = iq.element.child("pubsub", namespace: Namespace.pubsub)?.child("items", namespace: Namespace.pubsub)?
            .children("item", namespace: Namespace.pubsub).last,
              let element = item.child("bundle", namespace: namespace.rawValue) else { return nil }
        return bundle(in: element, namespace)
    }

    // MARK: - PubSub requests (XEP-0060 through PEP, XEP-0163)

    public static func itemsRequest(node: String, from jid: JID?, itemID: String? = nil) -> IQ {
        var items = Element("items", namespace: Namespace.pubsub, attributes: [("node", node)])
        if let itemID { items.append(Element("item", namespace: Namespace.pubsub, attributes: [("id", itemID)])) }
        return IQ(type: .get, to: jid?.bare, payload: Element("pubsub", namespace: Namespace.pubsub, children: [.element(items)]))
    }

    /// Publish with publish-options (XEP-0060 §7.1.5): the node is created or checked with `options`; a node
    /// configured differently answers `conflict` / `precondition-not-met`, see `configureRequest`.
    public static func publishRequest(node: String, itemID: String, payload: Element, options: [(String, String)]) -> IQ {
        let item = Element("item", namespace: Namespace.pubsub, attributes: [("id", itemID)], children: [.element(payload)])
        let publish = Element("publish", namespace: Namespace.pubsub, attributes: [("node", node)], children: [.element(item)])
        let form = dataForm(type: "http://jabber.org/protocol/pubsub#publish-options", options)
        let publishOptions = Element("publish-options", namespace: Namespace.pubsub, children: [.element(form)])
        return IQ(type: .set, payload: Element("pubsub", namespace: Namespace.pubsub, children: [.element(publish), .element(publishOptions)]))
    }

    /// Reconfigures an own node (XEP-0060 §8.2.4) so that publishing with `options` succeeds.
    public static func configureRequest(node: String, options: [(String, String)]) -> IQ {
        let configure = Element("configure", namespace: Namespace.pubsubOwner, attributes: [("node", node)],
                                children: [.element(dataForm(type: "http://jabber.org/protocol/pubsub#node_config", options))])
        return IQ(type: .set, payload: Element("pubsub", namespace: Namespace.pubsubOwner, children: [.element(configure)]))
    }

    /// Creates an own node with a configuration (XEP-0060 §8.1.3).
    public static func createRequest(node: String, options: [(String, String)]) -> IQ {
        let create = Element("create", namespace: Namespace.pubsub, attributes: [("node", node)])
        let configure = Element("configure", namespace: Namespace.pubsub,
                                children: [.element(dataForm(type: "http://jabber.org/protocol/pubsub#node_config", options))])
        return IQ(type: .set, payload: Element("pubsub", namespace: Namespace.pubsub, children: [.element(create), .element(configure)]))
    }

    /// The publish options of OMEMO nodes: readable by anyone; the OMEMO 2 bundle node keeps one item per device.
    public static func publishOptions(forBundleOf namespace: OMEMONamespace) -> [(String, String)] {
        namespace == .omemo2 ? [("pubsub#access_model", "open"), ("pubsub#max_items", "max")] : [("pubsub#access_model", "open")]
    }

    public static let deviceListOptions: [(String, String)] = [("pubsub#access_model", "open")]

    private static func dataForm(type: String, _ fields: [(String, String)]) -> Element {
        var form = Element("x", namespace: Namespace.dataForms, attributes: [("type", "submit")])
        form.append(Element("field", namespace: Namespace.dataForms, attributes: [("var", "FORM_TYPE"), ("type", "hidden")],
                            children: [.element(Element("value", namespace: Namespace.dataForms, text: type))]))
        for (name, value) in fields {
            form.append(Element("field", namespace: Namespace.dataForms, attributes: [("var", name)],
                                children: [.element(Element("value", namespace: Namespace.dataForms, text: value))]))
        }
        return form
    }
}

extension OMEMO {
    /// The device-list notifications of every OMEMO version Roost reads.
    public static let module = ClientModule(name: "XEP-0384 OMEMO Encryption", features: notifyFeatures)
}
