/// One bookmarked room, as XEP-0402 (PEP native bookmarks) and XEP-0048 (private XML storage) describe it.
/// Bookmarks are data the user's other clients wrote: nothing in them is ever used as a path, URL or command.
public struct Bookmark: Sendable, Equatable {
    public var room: JID
    public var name: String?
    public var autojoin: Bool
    public var nick: String?
    public var password: String?

    public init(room: JID, name: String? = nil, autojoin: Bool = false, nick: String? = nil, password: String? = nil) {
        self.room = room.bare
        self.name = name
        self.autojoin = autojoin
        self.nick = nick
        self.password = password
    }
}

/// XEP-0402 PEP Native Bookmarks: one item per room in the account's `urn:xmpp:bookmarks:1` node. With
/// `urn:xmpp:bookmarks:1+notify` advertised, the server pushes changes made by the user's other clients.
public enum Bookmarks {
    public static let node = Namespace.bookmarks
    public static let notifyFeature = Namespace.bookmarks + "+notify"
    /// Advertised on the account when the server keeps XEP-0048 and XEP-0402 in step.
    public static let compatFeature = Namespace.bookmarks + "#compat"

    public static func fetchRequest() -> IQ {
        let items = Element("items", namespace: Namespace.pubsub, attributes: [("node", node)])
        return IQ(type: .get, payload: Element("pubsub", namespace: Namespace.pubsub, children: [.element(items)]))
    }

    public static func items(in iq: IQ) -> [Bookmark] {
        iq.element.child("pubsub", namespace: Namespace.pubsub)?.child("items", namespace: Namespace.pubsub)?
            .children("item", namespace: Namespace.pubsub).compactMap { bookmark(item: $0) } ?? []
    }

    /// A change pushed by the server: a bookmark added or changed, or a room's bookmark removed.
    public enum Change: Sendable, Equatable {
        case set(Bookmark)
        case removed(JID)
    }

    /// The bookmark changes in a PEP event message; nil when it is not one. Only events from the account's own
    /// bare JID mean anything (the caller checks `from`).
    public static func changes(in message: Message) -> [Change]? {
        guard let event = message.element.child("event", namespace: Namespace.pubsubEvent),
              let items = event.child("items", namespace: Namespace.pubsubEvent), items[attribute: "node"] == node else { return nil }
        var changes: [Change] = []
        for child in items.childElements {
            switch child.name {
            case "item": if let bookmark = bookmark(item: child) { changes.append(.set(bookmark)) }
            case "retract": if let room = JID(parsing: child[attribute: "id"]), room.localpart != nil { changes.append(.removed(room.bare)) }
            default: break
            }
        }
        return changes
    }

    /// Publishes (adds or replaces) one bookmark, private to the account (XEP-0402 §3.2 publish options).
    public static func publishRequest(_ bookmark: Bookmark) -> IQ {
        var conference = Element("conference", namespace: node, attributes: [("autojoin", bookmark.autojoin ? "true" : "false")])
        if let name = bookmark.name { conference[attribute: "name"] = name }
        if let nick = bookmark.nick { conference.append(Element("nick", namespace: node, text: nick)) }
        if let password = bookmark.password { conference.append(Element("password", namespace: node, text: password)) }
        let item = Element("item", namespace: Namespace.pubsub, attributes: [("id", bookmark.room.description)], children: [.element(conference)])
        let publish = Element("publish", namespace: Namespace.pubsub, attributes: [("node", node)], children: [.element(item)])
        var form = Element("x", namespace: Namespace.dataForms, attributes: [("type", "submit")])
        for (field, value) in [("FORM_TYPE", Namespace.pubsubPublishOptions), ("pubsub#persist_items", "true"), ("pubsub#max_items", "max"),
                               ("pubsub#send_last_published_item", "never"), ("pubsub#access_model", "whitelist")] {
            var f = Element("field", namespace: Namespace.dataForms, attributes: [("var", field)])
            if field == "FORM_TYPE" { f[attribute: "type"] = "hidden" }
            f.append(Element("value", namespace: Namespace.dataForms, text: value))
            form.append(f)
        }
        let options = Element("publish-options", namespace: Namespace.pubsub, children: [.element(form)])
        return IQ(type: .set, payload: Element("pubsub", namespace: Namespace.pubsub, children: [.element(publish), .element(options)]))
    }

    public static func retractRequest(room: JID) -> IQ {
        let item = Element("item", namespace: Namespace.pubsub, attributes: [("id", room.bare.description)])
        let retract = Element("retract", namespace: Namespace.pubsub, attributes: [("node", node), ("notify", "true")], children: [.element(item)])
        return IQ(type: .set, payload: Element("pubsub", namespace: Namespace.pubsub, children: [.element(retract)]))
    }

    private static func bookmark(item: Element) -> Bookmark? {
        guard let room = JID(parsing: item[attribute: "id"]), room.localpart != nil, room.isBare,
              let conference = item.child("conference", namespace: node) else { return nil }
        let autojoin = conference[attribute: "autojoin"].map { $0 == "true" || $0 == "1" } ?? false
        return Bookmark(room: room, name: conference[attribute: "name"], autojoin: autojoin,
                        nick: conference.child("nick", namespace: node)?.text.nonEmpty,
                        password: conference.child("password", namespace: node)?.text.nonEmpty)
    }
}

/// XEP-0048 Bookmarks in private XML storage (XEP-0049): the older format, read when the server has no
/// XEP-0402 bookmarks, and written in full (it is one document).
public enum LegacyBookmarks {
    public static func fetchRequest() -> IQ {
        let storage = Element("storage", namespace: Namespace.legacyBookmarks)
        return IQ(type: .get, payload: Element("query", namespace: Namespace.privateStorage, children: [.element(storage)]))
    }

    public static func items(in iq: IQ) -> [Bookmark] {
        guard let storage = iq.element.child("query", namespace: Namespace.privateStorage)?
            .child("storage", namespace: Namespace.legacyBookmarks) else { return [] }
        return storage.children("conference", namespace: Namespace.legacyBookmarks).compactMap { conference in
            guard let room = JID(parsing: conference[attribute: "jid"]), room.localpart != nil else { return nil }
            let autojoin = conference[attribute: "autojoin"].map { $0 == "true" || $0 == "1" } ?? false
            return Bookmark(room: room, name: conference[attribute: "name"], autojoin: autojoin,
                            nick: conference.child("nick", namespace: Namespace.legacyBookmarks)?.text.nonEmpty,
                            password: conference.child("password", namespace: Namespace.legacyBookmarks)?.text.nonEmpty)
        }
    }

    public static func storeRequest(_ bookmarks: [Bookmark]) -> IQ {
        var storage = Element("storage", namespace: Namespace.legacyBookmarks)
        for bookmark in bookmarks {
            var conference = Element("conference", namespace: Namespace.legacyBookmarks,
                                     attributes: [("jid", bookmark.room.description), ("autojoin", bookmark.autojoin ? "true" : "false")])
            if let name = bookmark.name { conference[attribute: "name"] = name }
            if let nick = bookmark.nick { conference.append(Element("nick", namespace: Namespace.legacyBookmarks, text: nick)) }
            if let password = bookmark.password { conference.append(Element("password", namespace: Namespace.legacyBookmarks, text: password)) }
            storage.append(conference)
        }
        return IQ(type: .set, payload: Element("query", namespace: Namespace.privateStorage, children: [.element(storage)]))
    }
}

private extension String {
    var nonEmpty: String? { isEmpty ? nil : self }
}

extension Bookmarks {
    public static let module = ClientModule(name: "XEP-0402 PEP Native Bookmarks", features: [notifyFeature])
}
