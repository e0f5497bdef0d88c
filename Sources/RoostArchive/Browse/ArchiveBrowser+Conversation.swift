import RoostCore
import Foundation

/// A conversation's pages (keyset paging on message ids) and their live continuation: what arrived after a page's
/// cursor, and the messages on it changed since (corrections, retractions, reactions).
extension ArchiveBrowser {
    package enum PagePosition: Sendable, Equatable {
        /// The newest messages.
        case newest
        /// The page of messages older than this id.
        case before(Int64)
        /// The page of messages newer than this id.
        case after(Int64)
        /// A page with this message in the middle (open in context).
        case around(Int64)
    }

    /// Where a live stream continues a page: after this message and this time, with the renderer's state.
    package struct LiveCursor: Sendable, Equatable {
        package var afterID: Int64
        package var afterTimestamp: Int64
        package var day: String?
        package var sender: String?
        /// How far the page has seen corrections, retractions and reactions (newest row ids of their tables):
        /// those that come later redraw the messages they change.
        package var marks: AnnotationMarks

        package init(afterID: Int64, afterTimestamp: Int64, day: String? = nil, sender: String? = nil, marks: AnnotationMarks = .init()) {
            self.afterID = afterID
            self.afterTimestamp = afterTimestamp
            self.day = day
            self.sender = sender
            self.marks = marks
        }
    }

    /// The newest rows of `message_revisions` (corrections), `retractions` and `reactions` a page was drawn with.
    /// Row ids only grow, so "what changed messages since" is a seek on each table's primary key.
    package struct AnnotationMarks: Sendable, Equatable {
        package var revision: Int64 = 0
        package var retraction: Int64 = 0
        package var reaction: Int64 = 0

        package init(revision: Int64 = 0, retraction: Int64 = 0, reaction: Int64 = 0) {
            self.revision = revision
            self.retraction = retraction
            self.reaction = reaction
        }

        static func current(_ database: Database) throws(SQLiteError) -> AnnotationMarks {
            AnnotationMarks(revision: try database.cached("SELECT max(id) FROM message_revisions").scalarInt() ?? 0,
                            retraction: try database.cached("SELECT max(id) FROM retractions").scalarInt() ?? 0,
                            reaction: try database.cached("SELECT max(id) FROM reactions").scalarInt() ?? 0)
        }
    }

    package struct TranscriptPage: Sendable {
        package var account: String
        package var title: String
        package var isRoom: Bool
        /// The avatar of the header (escaped HTML).
        package var avatar: String
        /// The header's details line, each part escaped HTML.
        package var details: [String]
        /// The page's messages, states and presence changes, oldest first (HTML).
        package var html: String
        package var messageCount: Int
        /// `before=` of the next older page, nil on the oldest page.
        package var older: Int64?
        /// `after=` of the next newer page, nil on the newest page (which is the one that streams live).
        package var newer: Int64?
        /// Where the live stream of the newest page continues.
        package var live: LiveCursor
        /// States or presence changes left out (more than `sideEventLimit` in the page's span).
        package var omittedEvents: Int
        /// Unread messages of the conversation (at most `unreadLimit`): viewing a page does not change it.
        package var unread: Int
    }

    /// A page of a conversation; nil when the account or conversation is unknown.
    package func transcript(accountID: Int64, jid: String, position: PagePosition, states: Bool, presence: Bool,
                            limit: Int = ArchiveBrowser.pageSize) throws -> TranscriptPage? {
        try reader.withSnapshot { database -> TranscriptPage? in
            let accounts = try Self.accounts(database)
            guard let account = accounts[accountID] else { return nil }
            let contacts = try ContactDirectory(database: database, accounts: accounts, where: "c.account_id = ?", [.integer(accountID)])
            let reading = try MessageRowReading(database, accounts: accounts)
            let columns = MessageRowReading.columns
            let scope: [SQLValue] = [.integer(accountID), .text(jid)]
            func read(_ condition: String, _ order: String, _ bound: Int64?, _ count: Int) throws(SQLiteError) -> [MessageRow] {
                var rows: [MessageRow] = []
                let sql = "SELECT \(columns) FROM messages m WHERE m.account_id = ? AND m.conversation = ?\(condition) ORDER BY m.id \(order) LIMIT ?"
                try database.cached(sql).forEachRow(scope + (bound.map { [.integer($0)] } ?? []) + [.integer(Int64(count))]) { row throws(SQLiteError) in
                    rows.append(try reading.row(row))
                    return true
                }
                return rows
            }
            var messages: [MessageRow] = []
            var moreOlder = false, moreNewer = false
            var position = position
            while true {
                switch position {
                case .newest:
                    messages = try read("", "DESC", nil, limit + 1)
                    moreOlder = messages.count > limit
                    messages = Array(messages.prefix(limit).reversed())
                case .before(let id):
                    messages = try read(" AND m.id < ?", "DESC", id, limit + 1)
                    moreOlder = messages.count > limit
                    messages = Array(messages.prefix(limit).reversed())
                    moreNewer = true
                case .after(let id):
                    messages = try read(" AND m.id > ?", "ASC", id, limit + 1)
                    moreNewer = messages.count > limit
                    messages = Array(messages.prefix(limit))
                    moreOlder = true
                case .around(let id):
                    let half = max(1, limit / 2)
                    let older = try read(" AND m.id <= ?", "DESC", id, half + 1)
                    let newer = try read(" AND m.id > ?", "ASC", id, limit - half + 1)
                    moreOlder = older.count > half
                    moreNewer = newer.count > limit - half
                    messages = Array(older.prefix(half).reversed()) + Array(newer.prefix(limit - half))
                }
                // Paged past an end (or to a message that is gone): the newest page instead.
                guard messages.isEmpty, position != .newest else { break }
                position = .newest
                moreNewer = false
            }
            // A page reached by a cursor from the other side: is there really more on that side?
            func exists(_ condition: String, _ id: Int64) throws(SQLiteError) -> Bool {
                try database.cached("SELECT 1 FROM messages WHERE account_id = ? AND conversation = ? AND id \(condition) ? LIMIT 1")
                    .scalarInt(scope + [.integer(id)]) != nil
            }
            if case .after = position, let first = messages.first { moreOlder = try exists("<", first.id) }
            if case .before = position, let last = messages.last { moreNewer = try exists(">", last.id) }
            if messages.isEmpty {
                let known = try database.cached("SELECT 1 FROM chat_states WHERE account_id = ? AND conversation = ? LIMIT 1").scalarInt(scope) != nil
                    || contacts.contact(accountID: accountID, jid: jid) != nil
                if !known { return nil }
            }
            // The page's span of time: from its oldest message (from the start on the oldest page) up to the next
            // newer message (to now on the newest page), so states and presence each land on exactly one page.
            let lower = moreOlder ? messages.first?.timestamp ?? .min : .min
            var upper = Int64.max
            if moreNewer, let newest = messages.last {
                upper = try database.cached("SELECT timestamp FROM messages WHERE account_id = ? AND conversation = ? AND id > ? ORDER BY id LIMIT 1")
                    .scalarInt(scope + [.integer(newest.id)]) ?? .max
            }
            var (events, omitted) = try sideEvents(database: database, accounts: accounts, accountID: accountID, jid: jid,
                                                   from: lower, to: upper, states: states, presence: presence)
            events = Self.merge(messages, events)
            let room = contacts.rooms.room(accountID: accountID, jid: jid)
            var page = try render(events, messages: messages, account: account, accountID: accountID, jid: jid, contacts: contacts, room: room,
                                  older: moreOlder ? messages.first?.id : nil, newer: moreNewer ? messages.last?.id : nil, omitted: omitted)
            page.live.marks = try AnnotationMarks.current(database)
            page.unread = try ArchiveReader.unreadCount(database, accountID: accountID, conversation: jid, limit: Self.unreadLimit)
            return page
        }
    }

    /// `room`: nil for a chat (or a room the account no longer knows of).
    private func render(_ events: [TranscriptEvent], messages: [MessageRow], account: String, accountID: Int64, jid: String,
                        contacts: ContactDirectory, room: RoomDirectory.Room?, older: Int64?, newer: Int64?, omitted: Int) throws -> TranscriptPage {
        let clock = ZoneClock(timeZone: timeZone)
        let contact = contacts.contact(accountID: accountID, jid: jid)
        let title = contacts.title(accountID: accountID, jid: jid)
        let avatar = TranscriptHTML.avatar(name: title, key: jid,
                                           link: contact?.photoPath == nil ? nil : links.avatar(accountID: accountID, jid: jid))
        var transcript = TranscriptHTML(clock: clock, contacts: contacts, accountID: accountID, peerAvatar: avatar)
        var html = ""
        for event in events { html += try transcript.render(event, attachmentLink: attachmentLink) }
        let isRoom = room != nil || messages.last?.kind == .groupchat
        let lastTimestamp = max(events.last?.timestamp ?? 0, messages.last?.timestamp ?? 0)
        var details = TranscriptHTML.conversationDetails(title: title, conversation: jid, account: account, month: nil, clock: clock)
        if isRoom { details += room?.headerDetails ?? ["room"] }
        return TranscriptPage(
            account: account, title: title, isRoom: isRoom, avatar: avatar,
            details: details,
            html: html, messageCount: messages.count, older: older, newer: newer,
            live: LiveCursor(afterID: messages.last?.id ?? 0, afterTimestamp: lastTimestamp, day: transcript.currentDay,
                             sender: transcript.lastSender),
            omittedEvents: omitted, unread: 0)
    }

    /// What a live page is sent: what arrived after its cursor, and messages already on it that changed.
    package struct LiveUpdate: Sendable {
        /// New messages, states and presence changes (messages by id, the others by time), drawn to follow the
        /// page; empty when nothing arrived.
        package var html: String
        /// Messages up to the cursor that were corrected, retracted or reacted to since, each drawn anew (one
        /// `.msg` element per message, with its id `m<row>`) to take the place of the one the page shows.
        package var changed: String
        package var cursor: LiveCursor
    }

    /// What arrived or changed after `cursor`; nil when nothing did.
    package func live(accountID: Int64, jid: String, after cursor: LiveCursor, states: Bool, presence: Bool) throws -> LiveUpdate? {
        try reader.withSnapshot { database -> LiveUpdate? in
            let accounts = try Self.accounts(database)
            var messages: [MessageRow] = []
            let reading = try MessageRowReading(database, accounts: accounts)
            let columns = MessageRowReading.columns
            try database.cached("""
                SELECT \(columns) FROM messages m
                WHERE m.account_id = ? AND m.conversation = ? AND m.id > ? ORDER BY m.id LIMIT 200
                """).forEachRow([.integer(accountID), .text(jid), .integer(cursor.afterID)]) { row throws(SQLiteError) in
                messages.append(try reading.row(row))
                return true
            }
            let (side, _) = try sideEvents(database: database, accounts: accounts, accountID: accountID, jid: jid,
                                           from: cursor.afterTimestamp + 1, to: .max, states: states, presence: presence)
            let events = Self.merge(messages, side)
            let marks = try AnnotationMarks.current(database)
            let changed = marks == cursor.marks ? [] : try changedMessages(database, accountID: accountID, jid: jid, upTo: cursor.afterID,
                                                                           since: cursor.marks)
            guard !events.isEmpty || !changed.isEmpty || marks != cursor.marks else { return nil }
            let contacts = try ContactDirectory(database: database, accounts: accounts, where: "c.account_id = ?", [.integer(accountID)])
            let contact = contacts.contact(accountID: accountID, jid: jid)
            let title = contacts.title(accountID: accountID, jid: jid)
            let avatar = TranscriptHTML.avatar(name: title, key: jid,
                                               link: contact?.photoPath == nil ? nil : links.avatar(accountID: accountID, jid: jid))
            let clock = ZoneClock(timeZone: timeZone)
            var transcript = TranscriptHTML(clock: clock, contacts: contacts, accountID: accountID,
                                            peerAvatar: avatar, currentDay: cursor.day, lastSender: cursor.sender)
            var html = ""
            for event in events { html += try transcript.render(event, attachmentLink: attachmentLink) }
            // A changed message is drawn as the page drew it: after the message before it (same day, same run of
            // bubbles), so it shows its sender's name exactly when the page did. The day separator is not part of
            // the message; the page takes only the `.msg` element.
            var redrawn = ""
            let previous = "SELECT \(columns) FROM messages m WHERE m.account_id = ? AND m.conversation = ? AND m.id < ? ORDER BY m.id DESC LIMIT 1"
            let one = "SELECT \(columns) FROM messages m WHERE m.id = ?"
            for id in changed {
                var before: MessageRow?, message: MessageRow?
                try database.cached(previous).forEachRow([.integer(accountID), .text(jid), .integer(id)]) { row throws(SQLiteError) in
                    before = try reading.row(row)
                    return false
                }
                try database.cached(one).forEachRow([.integer(id)]) { row throws(SQLiteError) in
                    message = try reading.row(row)
                    return false
                }
                guard let message else { continue }
                var context = TranscriptHTML(clock: clock, contacts: contacts, accountID: accountID, peerAvatar: avatar)
                if let before, clock.civil(before.timestamp).dateText == clock.civil(message.timestamp).dateText {
                    _ = try context.render(.message(before), attachmentLink: attachmentLink)
                }
                redrawn += try context.render(.message(message), attachmentLink: attachmentLink)
            }
            let next = LiveCursor(afterID: messages.last?.id ?? cursor.afterID,
                                  afterTimestamp: max(cursor.afterTimestamp, events.last?.timestamp ?? 0),
                                  day: transcript.currentDay, sender: transcript.lastSender, marks: marks)
            return LiveUpdate(html: html, changed: redrawn, cursor: next)
        }
    }

    /// Messages of the conversation up to `upTo` that a correction, retraction or reaction stored after `since`
    /// changed, oldest first (at most 200: a page shows fewer).
    private func changedMessages(_ database: Database, accountID: Int64, jid: String, upTo: Int64,
                                 since marks: AnnotationMarks) throws(SQLiteError) -> [Int64] {
        var ids = Set<Int64>()
        let scope: [SQLValue] = [.integer(accountID), .text(jid), .integer(upTo)]
        try database.cached("""
            SELECT DISTINCT r.message_row FROM message_revisions r JOIN messages m ON m.id = r.message_row
            WHERE r.id > ?4 AND m.account_id = ?1 AND m.conversation = ?2 AND m.id <= ?3
            """).forEachRow(scope + [.integer(marks.revision)]) { row in ids.insert(row.int(0)); return true }
        try database.cached("""
            SELECT DISTINCT message_row FROM retractions
            WHERE id > ?4 AND account_id = ?1 AND conversation = ?2 AND message_row <= ?3 AND status = 'applied'
            """).forEachRow(scope + [.integer(marks.retraction)]) { row in ids.insert(row.int(0)); return true }
        try database.cached("""
            SELECT DISTINCT message_row FROM reactions
            WHERE id > ?4 AND account_id = ?1 AND conversation = ?2 AND message_row <= ?3
            """).forEachRow(scope + [.integer(marks.reaction)]) { row in ids.insert(row.int(0)); return true }
        return Array(ids.sorted().suffix(200))
    }

    /// Chat states and presence changes of one conversation in [from, to), at most `sideEventLimit` of each.
    private func sideEvents(database: Database, accounts: [Int64: String], accountID: Int64, jid: String, from: Int64, to: Int64,
                            states: Bool, presence: Bool) throws(SQLiteError) -> ([TranscriptEvent], Int) {
        var events: [TranscriptEvent] = []
        var omitted = 0
        let account = accounts[accountID] ?? ""
        let parameters: [SQLValue] = [.integer(accountID), .text(jid), .integer(from), .integer(to), .integer(Int64(Self.sideEventLimit + 1))]
        if states {
            var count = 0
            try database.cached("""
                SELECT conversation, from_jid, state, timestamp FROM chat_states
                WHERE account_id = ? AND conversation = ? AND timestamp >= ? AND timestamp < ? ORDER BY timestamp DESC, id DESC LIMIT ?
                """).forEachRow(parameters) { row in
                count += 1
                if count > Self.sideEventLimit { omitted += 1; return false }
                events.append(.chatState(ChatStateRow(account: account, conversation: row.text(0), from: row.text(1),
                                                      state: ChatState(rawValue: row.text(2)) ?? .active, timestamp: row.int(3))))
                return true
            }
        }
        if presence {
            var count = 0
            try database.cached("""
                SELECT contact, resource, type, show, status, priority, timestamp, \(RoomPresenceDetail.columns()) FROM presence_log
                WHERE account_id = ? AND contact = ? AND timestamp >= ? AND timestamp < ? ORDER BY timestamp DESC, id DESC LIMIT ?
                """).forEachRow(parameters) { row in
                count += 1
                if count > Self.sideEventLimit { omitted += 1; return false }
                events.append(.presence(PresenceRow(account: account, contact: row.text(0), resource: row.optionalText(1),
                                                    availability: PresenceRecord.Availability(rawValue: row.text(2)) ?? .available,
                                                    show: row.optionalText(3), status: row.optionalText(4),
                                                    priority: row.optionalInt(5).map { Int($0) }, timestamp: row.int(6),
                                                    room: RoomPresenceDetail.read(row, at: 7))))
                return true
            }
        }
        return (events, omitted)
    }

    /// Messages (in id order) and side events merged by time; on a tie the message comes first, as in exports.
    private static func merge(_ messages: [MessageRow], _ side: [TranscriptEvent]) -> [TranscriptEvent] {
        let sortedSide = side.enumerated().sorted { a, b in
            a.element.timestamp != b.element.timestamp ? a.element.timestamp < b.element.timestamp : a.offset > b.offset
        }.map(\.element)
        var result: [TranscriptEvent] = []
        result.reserveCapacity(messages.count + side.count)
        var index = 0
        for message in messages {
            while index < sortedSide.count, sortedSide[index].timestamp < message.timestamp {
                result.append(sortedSide[index])
                index += 1
            }
            result.append(.message(message))
        }
        result.append(contentsOf: sortedSide[index...])
        return result
    }

}
