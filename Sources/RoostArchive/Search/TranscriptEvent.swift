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
