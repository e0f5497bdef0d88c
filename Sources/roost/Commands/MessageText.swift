import Foundation
import RoostAgent
import RoostArchive
import RoostCore

/// The archive as a reading command sees it: the config, the reader, the account it keeps to (`--account`,
/// else `default_account`), the names of contacts as they are now, and how messages look as text.
struct ArchiveView {
    let config: RoostConfig
    let reader: ArchiveReader
    /// nil: every account.
    let account: String?
    let names: NameDirectory
    let text: MessageText

    static func open(_ context: CommandContext) throws -> ArchiveView {
        let config = try context.loadConfig()
        let reader = try ArchiveAccess.reader(context, config: config)
        let account = try context.readingAccount(config: config, reader: reader)
        let names: NameDirectory
        do { names = try reader.names() } catch { throw ArchiveFailure(error: error) }
        let text = MessageText(output: context.output, names: names,
                               showAccount: context.showsAccount(config: config, reader: reader, reading: account))
        return ArchiveView(config: config, reader: reader, account: account, names: names, text: text)
    }

    /// The one conversation `typed` names (a JID, the start of one, a roster name, nickname or full name, a
    /// room's name), with its account. Several accounts holding it without `--account` (or `default_account`)
    /// is an error that lists them.
    func conversation(_ typed: String, kinds: Set<NameDirectory.Kind> = [.contact, .room]) throws -> NameDirectory.Entry {
        let entries = try Self.resolve(typed, reader: reader, account: account, kinds: kinds)
        if entries.count > 1 {
            let listed = entries.map { $0.described(withAccount: true) }
            throw ArchiveFailure(error: .names(.ambiguous(typed: typed, candidates: listed)))
        }
        return entries[0]
    }

    /// What WHO means, for every command that takes one (log, read, send, roster, vcard, omemo, presence,
    /// rooms leave, export --conversation): the conversations of one JID `typed` names — a whole JID, the
    /// start of one, a roster name, nickname or full name, a room's name — one per account holding it (within
    /// `account` when given). A full JID (`room@service/nick`, `bob@example.org/phone`) is that address, as it
    /// is. Nothing fitting is `.names(.unknown)`, several JIDs fitting `.names(.ambiguous)` (listing them),
    /// both as `ArchiveFailure`.
    static func resolve(_ typed: String, reader: ArchiveReader, account: String?,
                        kinds: Set<NameDirectory.Kind> = [.contact, .room]) throws -> [NameDirectory.Entry] {
        // room@service/nick: a private conversation with a room's occupant (or a contact's resource), named exactly.
        if typed.contains("@"), let slash = typed.firstIndex(of: "/") {
            // The bare address in lower case, the resource as it is (nicks differ by case).
            let jid = typed[..<slash].lowercased() + typed[slash...]
            return [NameDirectory.Entry(account: account ?? "", jid: jid, kind: .contact, names: [])]
        }
        let entries: [NameDirectory.Entry]
        do { entries = try reader.resolve(typed, account: account, kinds: kinds) } catch { throw ArchiveFailure(error: error) }
        guard !entries.isEmpty else {
            throw ArchiveFailure(error: .names(.unknown(typed: typed, what: "conversation")))
        }
        return entries
    }
}

/// How messages look in text output — `search`, `log`, `show` — in one place, so names, ids, colours and the
/// account tag agree everywhere. Names are resolved now (roster name, nickname, full name, else the JID; in a
/// room, the nick), never taken from the name stored with each message, which `--json` keeps as
/// `sender_name` (history).
struct MessageText {
    let output: Output
    let names: NameDirectory
    /// Several accounts are configured and the output is not kept to one: each line names its account.
    let showAccount: Bool

    /// Who wrote `row`: "me", a room nick, or the contact's name.
    func sender(of row: MessageRow) -> String {
        sender(groupchat: row.kind == .groupchat, outgoing: row.direction == .outgoing, from: row.from, senderName: row.senderName,
               conversation: row.conversation, account: row.account)
    }

    private func sender(groupchat: Bool, outgoing: Bool, from: String, senderName: @autoclosure () -> String?,
                        conversation: @autoclosure () -> String, account: String) -> String {
        if groupchat {
            if let nick = Self.resource(of: from), !nick.isEmpty { return outgoing ? "me (\(nick))" : nick }
            return senderName() ?? conversation()
        }
        if outgoing { return "me" }
        // A private message in a room comes from an occupant, named by the nick (its bare JID is the room's).
        if let nick = Self.resource(of: from), !nick.isEmpty, conversation().contains("/") { return nick }
        return names.displayName(of: from, account: account)
    }

    /// The conversation's name: the contact's name, else its JID (rooms, and private conversations in rooms: their JID).
    func conversationName(of row: MessageRow) -> String {
        row.kind == .groupchat ? row.conversation : names.conversationName(of: row.conversation, account: row.account)
    }

    /// `a1b2c3d4 2026-01-15 12:03 Bob → me: hello`, `… me → Bob: see you`: a search hit, sender → recipient, each
    /// named as the conversation is (`room@service/nick → me` for a room occupant's private message); in a room
    /// `nick → room@service: …` (`me (nick) → …` for the user's own), as `roost log` names room senders.
    func searchLine(_ row: MessageRow, highlight: Bool) -> TerminalText {
        let conversation = output.styled(conversationName(of: row), .name)
        let route: TerminalText
        if row.kind == .groupchat {
            route = output.styled(sender(of: row), .name) + " → " + conversation
        } else if row.direction == .outgoing {
            route = "me → " + conversation
        } else {
            // The conversation names the sender (a private conversation in a room: by its whole address).
            route = conversation + " → me"
        }
        return prefix(row) + route + ": " + body(of: row, highlight: highlight)
    }

    /// `a1b2c3d4 2026-01-15 12:03 < Bob: hello`: a transcript line.
    func logLine(_ row: MessageRow, highlight: Bool = false) -> TerminalText {
        let arrow = row.direction == .incoming ? "<" : ">"
        return prefix(row) + "\(arrow) " + output.styled(sender(of: row), .name) + ": " + body(of: row, highlight: highlight)
    }

    /// `logLine` of a plain message (see `MessageLine`) without colour or account tag, appended as bytes: the
    /// same text, from the row's columns, without a `MessageRow` or a String per field. `senders` keeps the
    /// rendered names of the transcript's senders.
    func appendLogLine(_ line: MessageLine, senders: LineNames, to out: inout [UInt8]) {
        out.append(contentsOf: ShortID.text(for: line.id).utf8)
        out.append(0x20)
        TimeText.appendLocal(line.timestamp, to: &out)
        out.append(contentsOf: line.incoming ? " < ".utf8 : " > ".utf8)
        appendSender(line, senders: senders, to: &out)
        out.append(contentsOf: ": ".utf8)
        appendBody(line, to: &out)
    }

    /// `searchLine` of a plain message (see `MessageLine`) without colour, appended as bytes from the row's
    /// columns, as `appendLogLine`: the account tag when shown, the conversation's name, in a room the sender.
    func appendSearchLine(_ line: MessageLine, names: SearchLineNames, to out: inout [UInt8]) {
        out.append(contentsOf: ShortID.text(for: line.id).utf8)
        out.append(0x20)
        TimeText.appendLocal(line.timestamp, to: &out)
        out.append(0x20)
        let none = UnsafeBufferPointer<UInt8>(start: nil, count: 0)
        if showAccount {
            if let tag = names.accounts.name(account: line.accountID, incoming: false, groupchat: false, from: none) {
                out.append(contentsOf: tag)
            } else {
                let tag = Array((output.styled("[\(line.account)]", .account) + " ").rendered.utf8)
                names.accounts.keep(tag, account: line.accountID, incoming: false, groupchat: false, from: none)
                out.append(contentsOf: tag)
            }
        }
        // Sender → recipient, as `searchLine`: in a room the sender as `appendLogLine` names them; the conversation
        // as `conversationName(of:)` does (a room by its JID, anyone else by their name).
        func appendConversation(to out: inout [UInt8]) {
            let conversation = line.conversationBytes
            if let name = names.conversations.name(account: line.accountID, incoming: false, groupchat: line.groupchat, from: conversation) {
                out.append(contentsOf: name)
            } else {
                let jid = line.conversation
                let name = Array(output.styled(line.groupchat ? jid : self.names.conversationName(of: jid, account: line.account), .name).rendered.utf8)
                names.conversations.keep(name, account: line.accountID, incoming: false, groupchat: line.groupchat, from: conversation)
                out.append(contentsOf: name)
            }
        }
        if line.groupchat {
            appendSender(line, senders: names.senders, to: &out)
            out.append(contentsOf: " → ".utf8)
            appendConversation(to: &out)
        } else if line.incoming {
            appendConversation(to: &out)
            out.append(contentsOf: " → me".utf8)
        } else {
            out.append(contentsOf: "me → ".utf8)
            appendConversation(to: &out)
        }
        out.append(contentsOf: ": ".utf8)
        appendBody(line, to: &out)
    }

    /// Who wrote a plain line, as `sender(of:)` names them, from `senders` when known.
    private func appendSender(_ line: MessageLine, senders: LineNames, to out: inout [UInt8]) {
        let from = line.from
        if !line.groupchat && !line.incoming {
            out.append(contentsOf: "me".utf8)
        } else if let name = senders.name(account: line.accountID, incoming: line.incoming, groupchat: line.groupchat, from: from) {
            out.append(contentsOf: name)
        } else {
            let jid = String(decoding: from, as: UTF8.self)
            let name = Array(output.styled(sender(groupchat: line.groupchat, outgoing: !line.incoming, from: jid,
                                                  senderName: line.senderName, conversation: line.conversation,
                                                  account: line.account), .name).rendered.utf8)
            // A room message without a nick is named by other columns: not kept.
            if !line.groupchat || Self.resource(of: jid).map({ !$0.isEmpty }) == true {
                senders.keep(name, account: line.accountID, incoming: line.incoming, groupchat: line.groupchat, from: from)
            }
            out.append(contentsOf: name)
        }
    }

    /// As `body(of:)` of a plain line: the body made visible, continuation lines indented; then the line feed.
    private func appendBody(_ line: MessageLine, to out: inout [UInt8]) {
        if !VisibleText.append(line.body, keepingLineBreaks: true, indent: 4, to: &out) {
            let text = TerminalText(String(decoding: line.body, as: UTF8.self)).rendered
            out.append(contentsOf: text.replacingOccurrences(of: "\n", with: "\n    ").utf8)
        }
        out.append(0x0A)
    }

    /// Short id, local time to the minute, and the account when several are shown.
    func prefix(_ row: MessageRow) -> TerminalText {
        let id = ShortID.text(for: row.id), time = TimeText.local(row.timestamp)
        // Without colour, joined as they are: the id (digits and letters) and the time (digits, `-`, `:`, space)
        // have nothing to escape.
        var text: TerminalText = output.color ? output.styled(id, .id) + " " + output.styled(time, .dim) + " "
            : TerminalText(stringLiteral: id + " " + time + " ")
        if showAccount { text += output.styled("[\(row.account)]", .account) + " " }
        return text
    }

    /// The text of a message as people read it: the body (matches highlighted, or XEP-0393 styling, when colour
    /// is on), `[file …]` for attachments, what could not be decrypted, a retraction's tombstone, `(edited)`, the
    /// receipt ticks, a time the sender claimed more than a minute off the trusted one, the message a reply
    /// answers above and the reactions below; continuation lines indented. Control characters in what others
    /// wrote are shown, never obeyed.
    func body(of row: MessageRow, highlight: Bool) -> TerminalText {
        var text = TerminalText(row.displayBody ?? row.subject.map { "(subject) \($0)" } ?? "")
        if highlight, output.color, let body = row.body {
            text = ""
            var cursor = body.startIndex
            for range in row.bodyHighlightRanges {
                text += TerminalText(String(body[cursor..<range.lowerBound])) + output.styled(String(body[range]), .match)
                cursor = range.upperBound
            }
            text += TerminalText(String(body[cursor...]))
        } else if output.color, let body = row.body, row.displayBody == body {
            // The styling escapes the body itself: its colours are the only escape sequences in it.
            text = TerminalText(stringLiteral: MessageStyling.terminal(body))
        }
        if let encryption = row.encryption, encryption.isDecrypted, !encryption.isTrusted { text += " [untrusted device]" }
        if !row.attachments.isEmpty {
            let tags = TerminalText(row.attachments.map(\.tag).joined(separator: " "))
            text = row.bodyIsLink ? tags : text + (text.rendered.isEmpty ? "" : " ") + tags
        }
        let semantics = named(row.semantics, of: row)
        if semantics.retraction != nil, row.body == nil { text = "" }
        var notes: TerminalText = row.edited ? output.styled(" (edited)", .dim) : ""
        notes += TerminalText(semantics.tick)
        if let claimedAt = row.claimedAt {
            let (difference, overflow) = claimedAt.subtractingReportingOverflow(row.timestamp)
            if overflow || difference <= -60_000 || difference >= 60_000 { notes += " (sender's clock says \(TimeText.local(claimedAt)))" }
        }
        // The notes stay on the message's own line; the tombstone before it, the reply context above, the
        // reactions below.
        text += notes
        if let tombstone = semantics.tombstone(time: { TimeText.local($0) }) {
            text = semantics.retraction != nil && !text.rendered.isEmpty ? "[\(tombstone)] " + text : "[\(tombstone)]"
        }
        if let context = semantics.replyContext { text = TerminalText(context) + "\n" + text }
        if let reactions = semantics.reactionSummary { text += "\n" + TerminalText(reactions) }
        if text.rendered.utf8.contains(0x0A) {
            text = TerminalText(stringLiteral: text.rendered.replacingOccurrences(of: "\n", with: "\n    "))
        }
        return text
    }

    /// `semantics` with the people in it named as everywhere else: the user `me` (never an address with a
    /// resource), a room's occupant by nick, anyone else by their name now.
    func named(_ semantics: MessageSemantics, of row: MessageRow) -> MessageSemantics {
        var semantics = semantics
        if let by = semantics.retraction?.by { semantics.retraction?.by = person(by, about: row) }
        for index in semantics.reactions.indices where !semantics.reactions[index].own {
            semantics.reactions[index].from = person(semantics.reactions[index].from, about: row)
        }
        return semantics
    }

    /// Someone who did something to `row` (reacted, retracted), as everywhere else: the user `me`, an occupant of
    /// the room by nick, anyone else by their name now; what is no address (an occupant id, a name) as it is.
    func person(_ jid: String, about row: MessageRow) -> String {
        let bare = String(jid.split(separator: "/", maxSplits: 1).first ?? "")
        if bare.caseInsensitiveCompare(row.account) == .orderedSame { return "me" }
        if row.kind == .groupchat, bare.caseInsensitiveCompare(row.conversation) == .orderedSame,
           let nick = Self.resource(of: jid), !nick.isEmpty {
            return nick
        }
        return jid.contains("@") ? names.displayName(of: jid, account: row.account) : jid
    }

    /// The JSON line of `search`, `log` and `show`: the one message schema (`MessageJSON`, docs/export.md) with what
    /// this archive says now — the names as they are now among it. `target`: `show --context` marks the message asked for.
    func jsonLine(_ row: MessageRow, target: Bool? = nil) -> [UInt8] {
        let sender = row.direction == .outgoing && row.kind != .groupchat ? row.account : sender(of: row)
        return MessageJSON.line(row, names: .init(conversation: conversationName(of: row), sender: sender, target: target))
    }

    private static func resource(of jid: String) -> String? {
        guard let slash = jid.firstIndex(of: "/") else { return nil }
        return String(jid[jid.index(after: slash)...])
    }
}

/// The rendered names of the lines `MessageText.appendLogLine` and `appendSearchLine` write, by the JID they name
/// (a sender, a conversation) and how it is named: a transcript has few senders, and most lines have the same
/// sender as the line before but one.
final class LineNames {
    private struct Key: Hashable {
        var account: Int64
        var incoming: Bool
        var groupchat: Bool
        var from: [UInt8]

        /// The JID's bytes hashed as one block (an array hashes element by element: a search looks up a name
        /// for every line).
        func hash(into hasher: inout Hasher) {
            hasher.combine(account)
            hasher.combine(incoming)
            hasher.combine(groupchat)
            from.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }

    private var names: [Key: [UInt8]] = [:]
    private var last: (key: Key, name: [UInt8])?

    func name(account: Int64, incoming: Bool, groupchat: Bool, from: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        if let last, last.key.account == account, last.key.incoming == incoming, last.key.groupchat == groupchat,
           last.key.from.elementsEqual(from) {
            return last.name
        }
        let key = Key(account: account, incoming: incoming, groupchat: groupchat, from: Array(from))
        guard let name = names[key] else { return nil }
        last = (key, name)
        return name
    }

    func keep(_ name: [UInt8], account: Int64, incoming: Bool, groupchat: Bool, from: UnsafeBufferPointer<UInt8>) {
        let key = Key(account: account, incoming: incoming, groupchat: groupchat, from: Array(from))
        names[key] = name
        last = (key, name)
    }
}

/// What `MessageText.appendSearchLine` keeps: the account tags, the conversations' names and the room senders'.
final class SearchLineNames {
    let accounts = LineNames()
    let conversations = LineNames()
    let senders = LineNames()
}
