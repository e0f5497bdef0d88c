import RoostCore

/// Turns one jsonl line (schema in docs/export.md) into archive events that, committed through
/// `ArchiveWriter`, rebuild exactly what was exported: same dedup rules as live messages, and revisions
/// replayed as the XEP-0308 corrections they were.
enum ImportLineDecoder {
    /// `addresses`: one cache for every line of an import (see `AddressCache`).
    static func decode(_ line: UnsafeBufferPointer<UInt8>, addresses: AddressCache = AddressCache()) throws(ImportFields.Problem) -> ImportItem {
        let node: JSONNode
        do throws(JSONParser.Failure) {
            node = try JSONParser.parse(line)
        } catch {
            throw ImportFields.Problem(reason: "not JSON (column \(error.column): \(error.reason))")
        }
        guard case .object(let members) = node else { throw ImportFields.Problem(reason: "not a JSON object") }
        let fields = ImportFields(object: members, addresses: addresses)
        guard case .integer(let version)? = members["version"] else {
            throw ImportFields.Problem(reason: "missing \"version\" (is this a roost jsonl export?)")
        }
        guard version >= 1 else { throw ImportFields.Problem(reason: "unknown schema version \(version)") }
        if version > JSONLinesSchema.version {
            throw ImportFields.Problem(reason: "schema version \(version) was written by a newer roost (this one reads up to \(JSONLinesSchema.version)); upgrade roost")
        }
        let event = try fields.string("event")
        switch event {
        case "message": return .message(try message(fields))
        case "chat_state": return .chatState(try chatState(fields))
        case "presence": return .presence(try presence(fields))
        case "contact": return try contact(fields)
        case "subscription": return .subscription(try subscription(fields))
        default: throw ImportFields.Problem(reason: "unknown event \"\(event.prefix(40))\"")
        }
    }

    private static func message(_ fields: ImportFields) throws(ImportFields.Problem) -> [ArchiveEvent] {
        let account = try fields.jid("account", bare: true)
        let conversation = try fields.conversation("conversation")
        let direction = try fields.choice("direction", MessageDirection.self)
        let kind = try fields.choice("type", MessageKind.self)
        if kind == .groupchat && DedupKey.isRoomPrivate(conversation) {
            throw ImportFields.Problem(reason: "\"conversation\" of a group chat message must be the room's bare address")
        }
        let to = try fields.jidOrEmpty("to")
        let senderName = try fields.optionalString("sender_name")
        let stanzaId = try fields.optionalString("stanza_id")
        let stanzaIdBy = try fields.optionalString("stanza_id_by")
        let trusted = try fields.bool("stanza_id_trusted", default: false)
        var attachments: [AttachmentRecord] = []
        for item in try fields.objects("attachments") {
            attachments.append(try attachment(item))
        }
        var revisions: [MessageRevision] = []
        for item in try fields.objects("revisions") {
            guard let number = try item.optionalInteger("revision"), Int(number) == revisions.count else {
                throw ImportFields.Problem(reason: "\"revisions\" must be numbered 0, 1, 2, … in order")
            }
            revisions.append(MessageRevision(
                revision: Int(number), body: try item.optionalString("body"), from: try item.jid("from", bare: false),
                timestamp: try item.time("timestamp"), receivedAt: try item.time("received_at"),
                stanzaId: try item.optionalString("stanza_id"), stanzaIdTrusted: try item.bool("stanza_id_trusted", default: false),
                originId: try item.optionalString("origin_id"), messageId: try item.optionalString("message_id"),
                source: try item.choice("source", MessageSource.self), rawStanza: try item.optionalString("raw")))
        }
        if revisions.count == 1 { throw ImportFields.Problem(reason: "\"revisions\" holds an original without corrections") }
        let original = revisions.first
        let messageId = try fields.optionalString("message_id")
        let originId = try fields.optionalString("origin_id")
        let latestBody = try fields.optionalString("body")
        // The stored row keeps the original's fields except its body (the latest correction) and a stanza-id
        // it may have adopted later; revision 0 has the original values of both.
        let occupantId = try fields.optionalString("occupant_id")
        var first = MessageRecord(
            account: account, conversation: conversation, direction: direction, kind: kind, from: try fields.jid("from", bare: false),
            to: to, senderName: senderName, body: original.map { $0.body } ?? latestBody,
            subject: try fields.optionalString("subject"), thread: try fields.optionalString("thread"),
            timestamp: try fields.time("timestamp"), receivedAt: try fields.time("received_at"),
            stanzaId: original.map { $0.stanzaId } ?? stanzaId, stanzaIdBy: stanzaIdBy,
            stanzaIdTrusted: original.map { $0.stanzaIdTrusted } ?? trusted, originId: originId, messageId: messageId,
            replaces: try fields.optionalString("replaces"), isCarbon: try fields.bool("carbon", default: false),
            source: try fields.choice("source", MessageSource.self), rawStanza: try fields.optionalString("raw"),
            attachments: attachments)
        first.occupantId = occupantId
        first.realJid = try fields.optionalJID("real_jid", bare: true)
        first.claimedAt = try fields.optionalTime("claimed_at")
        // Present since the one message schema (exports before it leave an encrypted message's fields out).
        if let scheme = try fields.optionalString("encryption") {
            first.encryption = MessageEncryption(
                scheme: scheme, protocolNamespace: try fields.optionalString("encryption_namespace"),
                senderDevice: try fields.optionalInteger("sender_device"), fingerprint: try fields.optionalString("sender_fingerprint"),
                trust: try fields.optionalString("sender_trust"), failure: try fields.optionalString("undecryptable"))
        }
        first.replyTo = try fields.optionalString("reply_to")
        first.replyToJid = try fields.optionalString("reply_to_jid")
        var retraction: MessageSemantics.Retraction?
        if let by = try fields.optionalString("retracted_by") {
            retraction = .init(by: by, at: try fields.time("retracted_at"), reason: try fields.optionalString("retraction_reason"))
        }
        let receipt = try fields.optionalString("receipt")
        let progress = receipt.flatMap(MessageSemantics.PeerProgress.init(rawValue:))
        if receipt != nil && progress == nil { throw ImportFields.Problem(reason: "\"receipt\" must be delivered or read") }
        first.imported = ImportedState(retraction: retraction, peerProgress: progress, unread: try fields.bool("unread", default: false))
        var events: [ArchiveEvent] = [.message(first)]
        for item in try fields.objects("reactions") {
            events.append(try reaction(item, of: first))
        }
        guard original != nil else { return events }
        guard let target = messageId ?? originId else {
            throw ImportFields.Problem(reason: "a corrected message needs \"message_id\" or \"origin_id\"")
        }
        for revision in revisions.dropFirst() {
            var correction = MessageRecord(
                account: account, conversation: conversation, direction: direction, kind: kind, from: revision.from, to: to,
                senderName: senderName, body: revision.body, timestamp: revision.timestamp, receivedAt: revision.receivedAt,
                stanzaId: revision.stanzaId, stanzaIdBy: revision.stanzaIdTrusted ? (stanzaIdBy ?? account) : nil,
                stanzaIdTrusted: revision.stanzaIdTrusted, originId: revision.originId, messageId: revision.messageId,
                replaces: target, source: revision.source, rawStanza: revision.rawStanza)
            // A room's corrections are checked against the sender's occupant id: the same as the original's.
            correction.occupantId = occupantId
            events.append(.message(correction))
        }
        if trusted, let stanzaId, !(first.stanzaIdTrusted && first.stanzaId == stanzaId) {
            var adopted = first
            adopted.stanzaId = stanzaId
            adopted.stanzaIdBy = stanzaIdBy
            adopted.stanzaIdTrusted = true
            events.append(.message(adopted))
        }
        return events
    }

    /// One reaction update of the message's history, replayed as it was stored (its key included).
    private static func reaction(_ item: ImportFields, of message: MessageRecord) throws(ImportFields.Problem) -> ArchiveEvent {
        let reactor = try item.nonEmptyString("reactor")
        let name = try item.optionalString("name")
        let groupchat = message.kind == .groupchat
        let occupantId = groupchat && reactor.hasPrefix("occupant:") ? String(reactor.dropFirst("occupant:".count)) : nil
        let from = occupantId != nil ? "\(message.conversation)/\(name ?? "?")" : reactor
        var annotation = MessageAnnotation(
            account: message.account, conversation: message.conversation, kind: .reactions(try item.strings("emojis")),
            target: try item.nonEmptyString("target"), from: from, direction: try item.choice("direction", MessageDirection.self),
            groupchat: groupchat, occupantId: occupantId, senderName: name, timestamp: try item.time("timestamp"),
            source: try item.choice("source", MessageSource.self))
        annotation.key = try item.nonEmptyString("key")
        return .annotation(annotation)
    }

    /// `localPath` carries where the file is to be found: `file` (the export's copy, relative to the jsonl
    /// file's folder) or, from older exports, `local_path`; the importer brings it into the file store.
    private static func attachment(_ item: ImportFields) throws(ImportFields.Problem) -> AttachmentRecord {
        let sha256 = try item.optionalString("sha256")?.lowercased()
        if let sha256, !FileStore.isSHA256(sha256) {
            throw ImportFields.Problem(reason: "\"\(item.context)sha256\" must be 64 hex digits")
        }
        var state: AttachmentState?
        if let text = try item.optionalString("state") {
            state = AttachmentState(rawValue: text)
            if state == nil {
                throw ImportFields.Problem(reason: "\"\(item.context)state\" is \"\(text.prefix(40))\"; expected pending, stored, too-large, failed:… or refused:…")
            }
        }
        let legacyPath = try item.optionalString("local_path")
        return AttachmentRecord(
            url: try item.string("url"), localPath: try item.optionalString("file") ?? legacyPath,
            mime: try item.optionalString("mime"), size: try item.optionalInteger("size"), name: try item.optionalString("name"),
            description: try item.optionalString("description"), width: try item.optionalInteger("width").map { Int($0) },
            height: try item.optionalInteger("height").map { Int($0) },
            hashes: FileHash.parse(column: try item.strings("hashes").joined(separator: " ")), sha256: sha256, state: state)
    }

    private static func chatState(_ fields: ImportFields) throws(ImportFields.Problem) -> ChatStateRecord {
        ChatStateRecord(account: try fields.jid("account", bare: true), conversation: try fields.conversation("conversation"),
                        from: try fields.jid("from", bare: false), state: try fields.choice("state", ChatState.self),
                        timestamp: try fields.time("timestamp"), messageId: try fields.optionalString("message_id"))
    }

    private static func presence(_ fields: ImportFields) throws(ImportFields.Problem) -> PresenceRecord {
        var record = PresenceRecord(account: try fields.jid("account", bare: true), contact: try fields.jid("contact", bare: true),
                                    resource: try fields.optionalResource("resource"),
                                    availability: try availability(fields),
                                    show: try fields.optionalString("show"), status: try fields.optionalString("status"),
                                    priority: try fields.optionalInteger("priority").map { Int($0) }, timestamp: try fields.time("timestamp"))
        if let event = try fields.optionalString("room_event") {
            guard let kind = RoomEvent(rawValue: event) else {
                throw ImportFields.Problem(reason: "\"room_event\" is \"\(event.prefix(40))\"; expected one of \(RoomEvent.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            record.room = RoomPresenceDetail(event: kind, occupantId: try fields.optionalString("occupant_id"),
                                             realJid: try fields.optionalJID("real_jid", bare: true), role: try fields.optionalString("role"),
                                             affiliation: try fields.optionalString("affiliation"), newNick: try fields.optionalResource("new_nick"),
                                             reason: try fields.optionalString("reason"))
        }
        return record
    }

    private static func subscription(_ fields: ImportFields) throws(ImportFields.Problem) -> SubscriptionRecord {
        var record = SubscriptionRecord(account: try fields.nonEmptyString("account"), jid: try fields.nonEmptyString("jid"),
                                        direction: try fields.choice("direction", MessageDirection.self),
                                        kind: try fields.choice("kind", SubscriptionRecord.Kind.self),
                                        message: try fields.optionalString("message"), timestamp: try fields.time("timestamp"))
        var status: SubscriptionStatus?
        if let text = try fields.optionalString("status") {
            status = SubscriptionStatus(rawValue: text)
            if status == nil { throw ImportFields.Problem(reason: "\"status\" is \"\(text.prefix(40))\"; expected pending, accepted or denied") }
        }
        record.restored = SubscriptionRecord.Restored(status: status, updatedAt: try fields.optionalTime("updated_at") ?? record.timestamp)
        return record
    }

    private static func availability(_ fields: ImportFields) throws(ImportFields.Problem) -> PresenceRecord.Availability {
        let text = try fields.string("availability")
        guard let value = PresenceRecord.Availability(rawValue: text) else {
            throw ImportFields.Problem(reason: "\"availability\" is \"\(text.prefix(40))\"; expected available or unavailable")
        }
        return value
    }

    private static func contact(_ fields: ImportFields) throws(ImportFields.Problem) -> ImportItem {
        let account = try fields.jid("account", bare: true)
        let jid = try fields.jid("jid", bare: true)
        var roster: RosterItemRecord?
        var removedAt: Int64?
        if let updated = try fields.optionalTime("roster_updated_at") {
            let inRoster = try fields.bool("in_roster", default: true)
            roster = RosterItemRecord(account: account, jid: jid, name: try fields.optionalString("name"),
                                      groups: try fields.strings("groups"),
                                      subscription: try fields.optionalString("subscription") ?? "none",
                                      ask: inRoster ? try fields.optionalString("ask") : nil, timestamp: updated)
            if !inRoster { removedAt = updated }
        }
        var vCard: VCardRecord?
        if let fetched = try fields.optionalTime("vcard_fetched_at") {
            vCard = VCardRecord(account: account, jid: jid, nickname: try fields.optionalString("nickname"),
                                fullName: try fields.optionalString("fullname"), photoHash: try fields.optionalString("photo_hash"),
                                photoPath: try fields.optionalString("photo_path"), raw: try fields.optionalString("vcard_raw"),
                                fetchedAt: fetched)
        }
        if roster == nil && vCard == nil {
            throw ImportFields.Problem(reason: "a contact needs \"roster_updated_at\" or \"vcard_fetched_at\"")
        }
        return .contact(roster: roster, removedAt: removedAt, vCard: vCard)
    }
}
