import Foundation
import RoostArchive

/// `roost log WHO`: one conversation as a transcript, oldest first; the last messages, a time window, the
/// context of one message, or new messages as they arrive.
struct LogCommand: Command {
    static let name = "log"
    static let summary = "show one conversation as a transcript (last -n, --since/--until, --around ID, --follow)"
    static let usage = "[options] WHO"
    static let discussion = """
        Prints the messages with WHO — a contact's or room's JID, the start of one, or a roster name, nickname \
        or full name (one that fits several conversations is an error listing them), or room@service/nick for \
        private messages with an occupant — oldest first, each line \
        starting with the message's short id (see `roost show`), then "<" for an incoming message or ">" for \
        yours, and the sender ("< Bob: …", "> me: …"). When the conversation is held by several \
        accounts, choose one with --account (or [general] default_account). -n N shows the last N messages; \
        --since and --until keep to a time window (YYYY-MM-DD, YYYY-MM, YYYY-MM-DDTHH:MM, 7d, 2w, today, \
        yesterday; --until includes the day or month it names); --around ID shows the N messages (-n, \
        default 10) before and after one message; --follow prints the messages archived from now on as they \
        arrive, until interrupted. --states interleaves chat-state notifications (composing, paused, ...) and \
        --presence the contact's presence changes — for a room, its timeline: who joined, left, changed nick, \
        role or affiliation, was kicked or banned — in time order. On a terminal, a transcript longer than the \
        screen goes through the pager opened at its newest messages, as a chat client opens a conversation \
        (with less: scroll up or press g for older ones; --around opens at the start); one that fits is \
        printed as it is. Exit status: 0, 1 nothing to show (or WHO matches nobody), 2 WHO is ambiguous.
        """
    static let options: [OptionSpec] = [
        .value("lines", short: "n", placeholder: "N", help: "only the last N messages (with --around: N before and N after, default 10)"),
        .value("since", placeholder: "DATE", help: "from this date or time on (e.g. 2026-01-15, 7d, yesterday)"),
        .value("until", placeholder: "DATE", help: "up to the end of this date (e.g. 2026-01-31, 2026-02)"),
        .value("around", placeholder: "ID", help: "the messages before and after this one (its short id)"),
        .flag("follow", short: "f", help: "keep printing messages as they are archived, until interrupted"),
        .flag("states", help: "include chat states (composing, paused, active, inactive, gone)"),
        .flag("presence", help: "include the contact's presence changes (a room's joins, leaves, nick and role changes)"),
    ]
    static let arguments: [ArgumentKind] = [.contact]

    let who: String
    let states: Bool
    let presence: Bool
    let lines: Int?
    let since: String?
    let until: String?
    let around: String?
    let follow: Bool
    var pagesOutput: Bool { !follow }
    /// At the newest messages, as a chat client opens a conversation (older ones: scroll up); a message's
    /// surroundings (--around) from their start.
    var pagerOpensAtEnd: Bool { around == nil }

    init(parsed: ParsedArguments) throws(UsageError) {
        who = try parsed.onePositional(named: "WHO")
        states = parsed.flag("states")
        presence = parsed.flag("presence")
        lines = try parsed.integer("lines", in: 1...10_000_000)
        since = parsed.value("since")
        until = parsed.value("until")
        around = parsed.value("around")
        follow = parsed.flag("follow")
        for (option, value) in [("since", since), ("until", until)] {
            guard let value else { continue }
            do { _ = try DateExpression.span(of: value, option: option) } catch {
                throw UsageError("invalid --\(option) '\(value)': \(error.message)", command: parsed.command)
            }
        }
        if around != nil && (since != nil || until != nil || follow) {
            throw UsageError("--around shows one message's surroundings: it does not combine with --since, --until or --follow",
                             command: parsed.command)
        }
        if let around, ShortID.normalised(around) == nil && ShortID.decimalID(around) == nil {
            throw UsageError("'\(around)' is not a message id (the short id of search or log output)", command: parsed.command)
        }
    }

    func run(context: CommandContext) async throws -> ExitCode {
        let view = try ArchiveView.open(context)
        let conversation = try view.conversation(who)
        let account = conversation.account.isEmpty ? view.account : conversation.account
        var from = try since.map { try Self.span($0, "since").start }
        var upTo = try until.map { try Self.span($0, "until").end }
        var fromMessage: Int64?
        if let around {
            let (first, last) = try window(around: around, view: view, account: account, conversation: conversation.jid)
            from = first
            upTo = last + 1
        } else if let lines {
            do {
                // Counted in messages: those stored in the same millisecond as the first are cut by id.
                if let first = try view.reader.firstOfLast(lines, account: account, conversation: conversation.jid) {
                    from = max(from ?? first.timestamp, first.timestamp)
                    fromMessage = first.id
                }
            } catch { throw ArchiveFailure(error: error) }
        }
        // Watching starts before the transcript is read, so nothing archived meanwhile goes unseen.
        let (changes, changed) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let watcher = follow ? ArchiveWatcher(reader: view.reader) { changed.yield() } : nil
        defer { watcher?.stop() }
        if follow && watcher == nil {
            throw ArchiveFailure(error: .invalidRecord("cannot watch \(view.config.archivePath) for changes (inotify)"))
        }
        let known: Set<Int64>
        do { known = follow ? try view.reader.messageIDs(conversation: conversation.jid) : [] } catch { throw ArchiveFailure(error: error) }
        // One conversation of one account: its lines need no account tag.
        // Gathered into large writes, except while following (each message shows as it arrives).
        let output = follow ? context.output : context.output.buffered()
        defer { output.flush() }
        let printer = EventPrinter(context: context, text: MessageText(output: output, names: view.names, showAccount: false))
        do {
            if !context.options.json && !output.color {
                // Plain lines straight from the columns (`MessageText.appendLogLine`), the rest as events.
                try view.reader.transcriptLines(account: account, conversation: conversation.jid, includeStates: states,
                                                includePresence: presence, from: from, until: upTo,
                                                fromMessage: fromMessage) { item in
                    printer.print(item)
                    return true
                }
            } else {
                try view.reader.transcript(account: account, conversation: conversation.jid, includeStates: states,
                                           includePresence: presence, from: from, until: upTo, fromMessage: fromMessage,
                                           forLines: !context.options.json) { event in
                    printer.print(event)
                    return true
                }
            }
        } catch let error as ArchiveError {
            throw ArchiveFailure(error: error)
        }
        if watcher != nil {
            try await self.follow(changes, view: view, account: account, conversation: conversation.jid, printer: printer, known: known)
        }
        return printer.count == 0 && !follow ? .nothingFound : .ok
    }

    private static func span(_ text: String, _ option: String) throws -> (start: Int64, end: Int64) {
        do { return try DateExpression.span(of: text, option: option) } catch {
            throw UsageError("invalid --\(option) '\(text)': \(error.message)", command: "roost log")
        }
    }

    /// The time window of the messages around `id`: `lines` (default 10) before and after.
    private func window(around id: String, view: ArchiveView, account: String?, conversation: String) throws -> (Int64, Int64) {
        let found: [MessageRow]
        do { found = try view.reader.messages(withID: id) } catch { throw ArchiveFailure(error: error) }
        let inConversation = found.filter { row in
            row.conversation.caseInsensitiveCompare(conversation) == .orderedSame
                && (account.map { row.account.caseInsensitiveCompare($0) == .orderedSame } ?? true)
        }
        guard let target = inConversation.first else {
            throw ShowCommand.NotFound(id: "\(id) in the conversation with \(conversation)")
        }
        let count = lines ?? 10
        let rows: [MessageRow]
        do { rows = try view.reader.context(of: target, before: count, after: count) } catch { throw ArchiveFailure(error: error) }
        return (rows.first?.timestamp ?? target.timestamp, rows.last?.timestamp ?? target.timestamp)
    }

    /// New messages as they are archived: woken by each change `ArchiveWatcher` confirms, never by a timer. New
    /// are the ids the conversation did not have when last looked at (its index only is read for that), so a
    /// message the server archive or an import brings with an older time is shown too.
    private func follow(_ changes: AsyncStream<Void>, view: ArchiveView, account: String?, conversation: String, printer: EventPrinter,
                        known: Set<Int64>) async throws {
        var known = known
        view.text.output.info("following \(conversation); Ctrl-C ends")
        for await _ in changes {
            do {
                let now = try view.reader.messageIDs(conversation: conversation)
                let added = now.subtracting(known)
                view.text.output.debug("the archive changed: \(now.count) messages with \(conversation), \(added.count) new")
                known = now
                for row in try view.reader.messages(ids: added, account: account) { printer.print(.message(row)) }
            } catch {
                throw ArchiveFailure(error: error)
            }
        }
    }
}

/// Prints transcript events as text or JSON, counting them.
final class EventPrinter: @unchecked Sendable {
    let context: CommandContext
    let text: MessageText
    private(set) var count = 0

    init(context: CommandContext, text: MessageText) {
        self.context = context
        self.text = text
    }

    private let senders = LineNames()

    func print(_ item: TranscriptItem) {
        switch item {
        case .line(let line):
            count += 1
            text.output.line { text.appendLogLine(line, senders: senders, to: &$0) }
        case .event(let event):
            print(event)
        }
    }

    func print(_ event: TranscriptEvent) {
        count += 1
        let output = text.output
        let json = context.options.json
        switch event {
        case .message(let row):
            if json {
                output.jsonLine(encoded: text.jsonLine(row))
            } else {
                output.line(text.logLine(row))
            }
        case .chatState(let s):
            if json {
                output.jsonLine(["event": "chat_state", "account": .string(s.account), "conversation": .string(s.conversation),
                                 "from": .string(s.from), "state": .string(s.state.rawValue), "timestamp": .string(TimeText.utc(s.timestamp))])
            } else {
                let who = text.names.displayName(of: s.from, account: s.account)
                output.line(output.styled(TimeText.local(s.timestamp, seconds: true), .dim) + " * \(who) is \(s.state.rawValue)")
            }
        case .presence(let p):
            if json, let room = p.room {
                output.jsonLine(["event": "room_presence", "account": .string(p.account), "room": .string(p.contact),
                                 "nick": .string(p.resource), "room_event": .string(room.event.rawValue),
                                 "occupant_id": .string(room.occupantId), "real_jid": .string(room.realJid),
                                 "role": .string(room.role), "affiliation": .string(room.affiliation),
                                 "new_nick": .string(room.newNick), "reason": .string(room.reason),
                                 "timestamp": .string(TimeText.utc(p.timestamp))])
            } else if json {
                output.jsonLine(["event": "presence", "account": .string(p.account), "contact": .string(p.contact),
                                 "resource": .string(p.resource), "availability": .string(p.availability.rawValue),
                                 "show": .string(p.show), "status": .string(p.status),
                                 "priority": p.priority.map { .int($0) } ?? .null, "timestamp": .string(TimeText.utc(p.timestamp))])
            } else if let text = p.roomEventText {
                output.line(output.styled(TimeText.local(p.timestamp, seconds: true), .dim) + " * \(text)")
            } else {
                let who = text.names.displayName(of: p.contact, account: p.account) + (p.resource.map { "/\($0)" } ?? "")
                let what = p.availability == .available ? (p.show ?? "online") : "offline"
                output.line(output.styled(TimeText.local(p.timestamp, seconds: true), .dim) + " * \(who) is \(what)"
                            + (p.status.map { " (\($0))" } ?? ""))
            }
        }
    }
}
