/// Turns the names in `with:`, `in:`, `from:` and `to:` into the JIDs they mean before the query is compiled
/// (see `NameDirectory`): `with:bo` and `with:Bobby` find Bob's conversation, a name that fits several
/// conversations is an error listing them. A `from:`/`to:` name no contact has stays as typed, so it still
/// matches a room nick or the sender name stored with a message.
enum QueryNames {
    static func resolve(_ node: QueryNode, account: String?, database: Database) throws(ArchiveError) -> QueryNode {
        switch node {
        case .all, .text:
            return node
        case .and(let children):
            var resolved: [QueryNode] = []
            for child in children { resolved.append(try resolve(child, account: account, database: database)) }
            return .and(resolved)
        case .or(let children):
            var resolved: [QueryNode] = []
            for child in children { resolved.append(try resolve(child, account: account, database: database)) }
            return .or(resolved)
        case .not(let inner):
            return .not(try resolve(inner, account: account, database: database))
        case .filter(let filter):
            return .filter(try resolve(filter, account: account, database: database))
        }
    }

    private static func resolve(_ filter: QueryFilter, account: String?, database: Database) throws(ArchiveError) -> QueryFilter {
        switch filter {
        case .with(let value) where value.contains("@") && value.contains("/"):
            // A full JID: the private conversation with a room's occupant when its bare part is a room (or that
            // conversation exists), else the contact's conversation.
            if try isPrivateConversation(value, database: database) { return .with(value) }
            return .with(try jid(JIDText.bare(value), account: account, kinds: [.contact, .room], database: database, required: true) ?? value)
        case .with(let value):
            return .with(try jid(value, account: account, kinds: [.contact, .room], database: database, required: true) ?? value)
        case .room(let value):
            return .room(try jid(value, account: account, kinds: [.room], database: database, required: true) ?? value)
        case .from(let value) where !value.contains("/") && !value.contains("@"):
            // Kept beside the contact it names: in rooms the same name is matched against nicks.
            return .fromName(value, contact: try jid(value, account: account, kinds: [.contact], database: database, required: false))
        case .from(let value) where !value.contains("/"):
            return .from(try jid(value, account: account, kinds: [.contact], database: database, required: false) ?? value)
        case .to(let value) where !value.contains("/"):
            return .to(try jid(value, account: account, kinds: [.contact], database: database, required: false) ?? value)
        default:
            return filter
        }
    }

    /// Whether the full JID `value` names a private conversation in a room: the archive holds that conversation,
    /// or its bare part is a room (the archive knows the room, or holds group chat messages of it).
    private static func isPrivateConversation(_ value: String, database: Database) throws(ArchiveError) -> Bool {
        do throws(SQLiteError) {
            return try database.cached("""
                SELECT EXISTS (SELECT 1 FROM messages WHERE conversation = ?1)
                    OR EXISTS (SELECT 1 FROM rooms WHERE jid = ?2)
                    OR EXISTS (SELECT 1 FROM messages WHERE conversation = ?2 AND type = 'groupchat')
                """).scalarInt([.text(value), .text(JIDText.bare(value))]) == 1
        } catch {
            throw .sqlite(error)
        }
    }

    /// The one JID `value` means; nil when it means none and that is allowed.
    private static func jid(_ value: String, account: String?, kinds: Set<NameDirectory.Kind>, database: Database,
                            required: Bool) throws(ArchiveError) -> String? {
        let outcome: Result<[NameDirectory.Entry], NameDirectory.ResolutionError>
        do throws(SQLiteError) {
            outcome = try ArchiveReader.resolve(value, account: account, kinds: kinds, database: database)
        } catch {
            throw .sqlite(error)
        }
        switch outcome {
        case .success(let entries):
            return entries.first?.jid
        case .failure(let error):
            if case .unknown = error, !required { return nil }
            throw .names(error)
        }
    }
}
