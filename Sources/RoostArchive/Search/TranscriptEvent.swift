/// One line of a conversation transcript.
public enum TranscriptEvent: Sendable, Equatable {
    case message(MessageRow)
    case chatState(ChatStateRow)
    case presence(PresenceRow)

    /// UTC milliseconds.
    public var timestamp: Int64 {
        switch self {
        case .message(let row): row.timestamp
        case .chatState(let row): row.timestamp
        case .presence(let row): row.timestamp
        }
    }
}

/// A transcript event for `roost log`'s text lines (and a match for `roost search`'s): a plain message as a view
/// of its statement row, or any other event.
package enum TranscriptItem: TimeOrderedEvent {
    case line(MessageLine)
    case event(TranscriptEvent)

    package var timestamp: Int64 {
        switch self {
        case .line(let line): line.timestamp
        case .event(let event): event.timestamp
        }
    }
}

/// A message whose text line is its prefix, sender and body and nothing else — no attachment, reaction,
/// reply, retraction, encryption, edit, receipt tick, claimed time off by a minute or more, and a body — read
/// straight from the columns of its row: the bytes of its texts, no `MessageRow`, no Strings. Valid only
/// inside the callback that receives it (the statement steps on). A view of a row, not a second read model:
/// what it shows is what `MessageRow` holds for the same message.
package struct MessageLine {
    private let row: Statement.Row
    package let id: Int64
    package let accountID: Int64
    package let timestamp: Int64
    package let incoming: Bool
    package let groupchat: Bool
    /// The account's JID, looked up when needed.
    private let accounts: [Int64: String]

    /// What the transcript query selects for a line: few columns, no subquery per row.
    static let columns = """
        m.id, m.account_id, m.direction, m.type, m.from_jid, m.sender_name, m.timestamp, m.body, m.conversation,
        m.edited, m.encryption IS NOT NULL, m.claimed_at, m.reply_to IS NOT NULL, m.retracted
        """

    init(_ row: Statement.Row, accounts: [Int64: String]) {
        self.row = row
        self.accounts = accounts
        id = row.int(0)
        accountID = row.int(1)
        timestamp = row.int(6)
        // As `MessageRowReading` reads them: anything but "out" is incoming, anything but "groupchat" is not a room.
        incoming = !Self.equals(row.textBytes(2), "out")
        groupchat = Self.equals(row.textBytes(3), "groupchat")
    }

    package var account: String { accounts[accountID] ?? "" }
    package var from: UnsafeBufferPointer<UInt8> { row.textBytes(4) ?? UnsafeBufferPointer(start: nil, count: 0) }
    package var senderName: String? { row.optionalText(5) }
    package var conversation: String { row.text(8) }
    package var conversationBytes: UnsafeBufferPointer<UInt8> { row.textBytes(8) ?? UnsafeBufferPointer(start: nil, count: 0) }
    /// Not nil: a message without a body is not plain.
    package var body: UnsafeBufferPointer<UInt8> { row.textBytes(7) ?? UnsafeBufferPointer(start: nil, count: 0) }

    /// Whether the line shows nothing but the body; `decorated` holds the rows with attachments or reactions,
    /// `marks` the conversation's receipt marks.
    func isPlain(decorated: DecoratedRows, marks: ReadMarks.Marks?) -> Bool {
        guard !row.isNull(7), row.int(9) == 0, !row.bool(10), !row.bool(12), !row.bool(13) else { return false }
        if let claimedAt = row.optionalInt(11) {
            // The note `MessageText.body` adds for a clock off by a minute or more.
            let (difference, overflow) = claimedAt.subtractingReportingOverflow(timestamp)
            if overflow || difference <= -60_000 || difference >= 60_000 { return false }
        }
        if !incoming, let marks, marks.displayed >= id || marks.received >= id { return false }
        return !decorated.contains(id)
    }

    private static func equals(_ bytes: UnsafeBufferPointer<UInt8>?, _ text: StaticString) -> Bool {
        guard let bytes, bytes.count == text.utf8CodeUnitCount else { return false }
        return bytes.elementsEqual(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }
}
