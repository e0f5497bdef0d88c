import Foundation

/// Who is who in the archive: the names people know their contacts and rooms by, decided when the archive
/// is read (never the name stored with each message, which stays as history), and the resolution of what a
/// user types — a name, a nickname, the start of a JID — into the conversations it means.
///
/// A display name is, in order: the roster name, the vCard nickname, the vCard full name; else the JID.
/// Resolution works by conversation kind: `with:` and `roost log` look at contacts and rooms, `in:` at rooms
/// only, `from:`/`to:` at contacts. Inside a room people are their nicks; those are matched by the query
/// itself (`from:nick` finds a room occupant), so a directory of occupants can be added as another kind
/// without changing the callers.
public struct NameDirectory: Sendable {
    public enum Kind: Sendable, Hashable {
        /// A person: a roster entry, a vCard, or someone a 1:1 conversation was held with.
        case contact
        /// A group chat (its messages are `groupchat`).
        case room
    }

    /// One conversation partner of one account.
    public struct Entry: Sendable, Hashable {
        public var account: String
        /// Bare JID, as stored.
        public var jid: String
        public var kind: Kind
        /// Roster name, vCard nickname, vCard full name — those that are set, in that order.
        public var names: [String]

        public init(account: String, jid: String, kind: Kind, names: [String]) {
            self.account = account
            self.jid = jid
            self.kind = kind
            self.names = names
        }

        /// The name to show: the first of `names`, else the JID.
        public var displayName: String { names.first ?? jid }

        /// `Bob (bob@example.org, in me@example.org)` for lists of candidates.
        public func described(withAccount: Bool) -> String {
            var text = names.first.map { "\($0) (\(jid)" } ?? jid
            if withAccount { text += names.isEmpty ? " (in \(account))" : ", in \(account)" }
            if !names.isEmpty { text += ")" }
            return text
        }
    }

    /// What a typed name could not be turned into.
    public enum ResolutionError: Error, Sendable, Equatable, CustomStringConvertible {
        /// Several conversations fit; the user must say which.
        case ambiguous(typed: String, candidates: [String])
        /// Nothing fits.
        case unknown(typed: String, what: String)

        public var description: String {
            switch self {
            case let .ambiguous(typed, candidates):
                let shown = candidates.prefix(10).map { "  " + $0 }.joined(separator: "\n")
                let more = candidates.count > 10 ? "\n  … and \(candidates.count - 10) more" : ""
                return "'\(typed)' is ambiguous; it could be:\n\(shown)\(more)\nType more of the name or the JID (or choose the account with --account)."
            case let .unknown(typed, what):
                return "no \(what) matches '\(typed)' (a roster name, nickname, full name, the start of a JID, or a whole JID)"
            }
        }
    }

    /// Entries of every account, keyed by lower-cased account and JID.
    private var entries: [String: Entry] = [:]

    public init() {}

    /// Roster name, nickname, full name: the non-blank ones, in that order, without repeats.
    static func names(of contact: ContactRow) -> [String] {
        var names: [String] = []
        for candidate in [contact.name, contact.nickname, contact.fullName] {
            guard let candidate, !candidate.trimmingCharacters(in: .whitespaces).isEmpty, !names.contains(candidate) else { continue }
            names.append(candidate)
        }
        return names
    }

    private static func key(_ account: String, _ jid: String) -> String { account.lowercased() + " " + jid.lowercased() }

    mutating func add(_ entry: Entry) {
        entries[Self.key(entry.account, entry.jid)] = entry
    }

    /// Adds `entry` unless its account and JID have one already (a contact's names come first).
    mutating func addIfAbsent(_ entry: Entry) {
        let key = Self.key(entry.account, entry.jid)
        if entries[key] == nil { entries[key] = entry }
    }

    /// Every known contact, ordered by account and JID.
    public var all: [Entry] { entries.values.sorted(by: Self.order) }

    /// The display name of `jid` for `account` (roster name, nickname, full name), nil when none is known.
    public func name(of jid: String, account: String) -> String? {
        entries[Self.key(account, JIDText.bare(jid))]?.names.first
    }

    /// The name to show for `jid`: its display name, else the bare JID.
    public func displayName(of jid: String, account: String) -> String {
        name(of: jid, account: account) ?? JIDText.bare(jid)
    }

    /// The name to show for a conversation: the contact's display name, else its JID; a private conversation with
    /// a room's occupant (`room@service/nick`) by that whole address — the room's bare JID names no one.
    public func conversationName(of conversation: String, account: String) -> String {
        conversation.contains("/") ? conversation : displayName(of: conversation, account: account)
    }

    /// The names a conversation partner has in any account (for resolution).
    func names(of jid: String) -> [String] {
        var names: [String] = []
        for entry in entries.values where entry.jid.caseInsensitiveCompare(jid) == .orderedSame {
            for name in entry.names where !names.contains(name) { names.append(name) }
        }
        return names
    }

    /// Which of `jids` (bare JIDs, any case) `typed` means: a whole JID (with `@`) is itself, else the JIDs
    /// starting with it; a name is an exact roster name, nickname, full name or local part, else the JIDs,
    /// names or words of names starting with it. Exact beats prefix. Several different JIDs are `ambiguous`,
    /// none is `unknown`; a whole JID nobody knows is returned as it is.
    func match(_ typed: String, among jids: [String], what: String) throws(ResolutionError) -> [String] {
        let text = typed.trimmingCharacters(in: .whitespaces)
        let wanted = text.lowercased()
        guard !wanted.isEmpty else { throw .unknown(typed: text, what: what) }
        var unique: [String: String] = [:]
        for jid in jids { unique[jid.lowercased()] = unique[jid.lowercased()] ?? jid }
        let candidates = unique.values.sorted { $0.lowercased() < $1.lowercased() }
        func decide(_ found: [String]) throws(ResolutionError) -> [String]? {
            guard !found.isEmpty else { return nil }
            if found.count > 1 { throw .ambiguous(typed: text, candidates: found.map(describe)) }
            return found
        }
        if wanted.contains("@") {
            let bare = JIDText.bare(wanted)
            if let exact = candidates.first(where: { $0.lowercased() == bare }) { return [exact] }
            if let found = try decide(candidates.filter { $0.lowercased().hasPrefix(bare) }) { return found }
            return [JIDText.bare(text)]
        }
        let exact = candidates.filter { jid in
            Self.localpart(jid) == wanted || names(of: jid).contains { $0.lowercased() == wanted }
        }
        if let found = try decide(exact) { return found }
        let prefixed = candidates.filter { jid in
            jid.lowercased().hasPrefix(wanted) || names(of: jid).contains { name in
                name.lowercased().hasPrefix(wanted) || Self.words(of: name).contains { $0.hasPrefix(wanted) }
            }
        }
        if let found = try decide(prefixed) { return found }
        throw .unknown(typed: text, what: what)
    }

    /// `Bob (bob@example.org)` for lists of candidates.
    private func describe(_ jid: String) -> String {
        names(of: jid).first.map { "\($0) (\(jid))" } ?? jid
    }

    static func order(_ a: Entry, _ b: Entry) -> Bool {
        (a.account.lowercased(), a.jid.lowercased()) < (b.account.lowercased(), b.jid.lowercased())
    }

    private static func localpart(_ jid: String) -> String {
        guard let at = jid.firstIndex(of: "@") else { return "" }
        return String(jid[..<at]).lowercased()
    }

    private static func words(of name: String) -> [String] {
        name.lowercased().split(whereSeparator: { $0.isWhitespace || $0 == "-" || $0 == "." || $0 == "_" }).map(String.init)
    }
}

extension ArchiveReader {
    /// The display names of every account's contacts (from the contacts table only: cheap).
    public func names() throws(ArchiveError) -> NameDirectory {
        try withDatabase { database throws(SQLiteError) -> NameDirectory in
            try Self.names(database)
        }
    }

    static func names(_ database: Database) throws(SQLiteError) -> NameDirectory {
        var directory = NameDirectory()
        let accounts = try accountNames(database)
        try database.prepare("SELECT account_id, jid, name, nickname, fullname FROM contacts").forEachRow { row in
            let contact = ContactRow(account: accounts[row.int(0)] ?? "", jid: row.text(1), inRoster: false, name: row.optionalText(2),
                                     groups: [], subscription: nil, ask: nil, rosterUpdatedAt: nil, nickname: row.optionalText(3),
                                     fullName: row.optionalText(4), photoHash: nil, photoPath: nil, vCardRaw: nil, vCardFetchedAt: nil)
            directory.add(NameDirectory.Entry(account: contact.account, jid: contact.jid, kind: .contact,
                                              names: NameDirectory.names(of: contact)))
            return true
        }
        return directory
    }

    /// The conversations `typed` names (see `NameDirectory.match`), each with the account it belongs to, within
    /// `account` (nil: all) and `kinds`. Candidates are the contacts and every conversation of the archive;
    /// only the few whose name or JID fits are looked up by account and kind, so this costs one pass over an
    /// index, not over the messages. A whole JID the archive does not know comes back as a contact of
    /// `account` (or of no account: ""), for the caller to use as it is.
    public func resolve(_ typed: String, account: String?, kinds: Set<NameDirectory.Kind> = [.contact, .room]) throws(ArchiveError) -> [NameDirectory.Entry] {
        let outcome = try withDatabase { database throws(SQLiteError) in
            try Self.resolve(typed, account: account, kinds: kinds, database: database)
        }
        switch outcome {
        case .success(let entries): return entries
        case .failure(let error): throw .names(error)
        }
    }

    /// `resolve` on a connection the caller already holds (inside a snapshot).
    static func resolve(_ typed: String, account: String?, kinds: Set<NameDirectory.Kind>,
                        database: Database) throws(SQLiteError) -> Result<[NameDirectory.Entry], NameDirectory.ResolutionError> {
        var directory = try names(database)
        let accounts = try accountNames(database)
        // Rooms by the name their bookmark or their disco#info gives them (`roost read team`), for resolution only.
        try database.prepare("SELECT account_id, jid, coalesce(name, disco_name) FROM rooms").forEachRow { row in
            let name = row.optionalText(2)?.trimmingCharacters(in: .whitespaces)
            directory.addIfAbsent(NameDirectory.Entry(account: accounts[row.int(0)] ?? "", jid: row.text(1), kind: .room,
                                                      names: name.map { $0.isEmpty ? [] : [$0] } ?? []))
            return true
        }
        var jids = directory.all.map(\.jid)
        // The per-conversation counters (SchemaV10) answer both questions in O(conversations); grouping the messages
        // read every row of the conversation (half the pages `roost log` read) and every entry of an index.
        let counted = try StatsQuery.keepsCounters(database)
        // A private conversation in a room (`room@service/nick`) is named by its whole address only, never by a name:
        // `in:lounge` is the room, not also every private conversation held in it.
        let named = "instr(conversation, '/') = 0"
        try database.prepare(counted ? "SELECT DISTINCT conversation FROM conversation_counts WHERE messages > 0 AND \(named) ORDER BY conversation"
                                     : "SELECT DISTINCT conversation FROM messages WHERE \(named)").forEachRow { row in
            jids.append(row.text(0))
            return true
        }
        let what = kinds == [.room] ? "room" : kinds == [.contact] ? "contact" : "contact, room or conversation"
        let matched: [String]
        do throws(NameDirectory.ResolutionError) {
            matched = try directory.match(typed, among: jids, what: what)
        } catch {
            return .failure(error)
        }
        var entries: [NameDirectory.Entry] = []
        for jid in matched {
            var found: [String: NameDirectory.Entry] = [:]
            for entry in directory.all where entry.jid.caseInsensitiveCompare(jid) == .orderedSame {
                found[entry.account.lowercased()] = entry
            }
            try database.prepare(counted
                ? "SELECT account_id, groupchat > 0 FROM conversation_counts WHERE conversation = ? AND messages > 0 ORDER BY account_id"
                : "SELECT account_id, max(type = 'groupchat') FROM messages WHERE conversation = ? GROUP BY account_id"
            ).forEachRow([.text(jid)]) { row in
                let owner = accounts[row.int(0)] ?? ""
                var entry = found[owner.lowercased()] ?? NameDirectory.Entry(account: owner, jid: jid, kind: .contact, names: [])
                if row.bool(1) { entry.kind = .room }
                found[owner.lowercased()] = entry
                return true
            }
            entries += found.values.filter { entry in
                kinds.contains(entry.kind) && (account.map { entry.account.caseInsensitiveCompare($0) == .orderedSame } ?? true)
            }
        }
        if entries.isEmpty {
            // A whole JID nobody knows is still an address (to send to, or to search for nothing).
            if typed.contains("@"), let jid = matched.first {
                return .success([NameDirectory.Entry(account: account ?? "", jid: jid, kind: kinds.contains(.contact) ? .contact : .room, names: [])])
            }
            return .failure(.unknown(typed: typed.trimmingCharacters(in: .whitespaces), what: what))
        }
        return .success(entries.sorted(by: NameDirectory.order))
    }

    /// Which one of `jids` `typed` names (e.g. among the JIDs with a pending friend request), by the rules of
    /// `NameDirectory.match`, with the names of the archive's contacts.
    public func resolve(_ typed: String, among jids: [String], what: String) throws(ArchiveError) -> String {
        let directory = try names()
        do throws(NameDirectory.ResolutionError) {
            return try directory.match(typed, among: jids, what: what).first ?? typed
        } catch {
            throw .names(error)
        }
    }

    /// The accounts of the archive, bare JIDs in their stored spelling.
    public func accounts() throws(ArchiveError) -> [String] {
        try withDatabase { database throws(SQLiteError) -> [String] in
            try Self.accountNames(database).values.sorted()
        }
    }

    static func accountNames(_ database: Database) throws(SQLiteError) -> [Int64: String] {
        var accounts: [Int64: String] = [:]
        try database.prepare("SELECT id, jid FROM accounts").forEachRow { row in
            accounts[row.int(0)] = row.text(1)
            return true
        }
        return accounts
    }
}
