/// One thing an export writes, in time order within a conversation or file.
enum ExportEvent {
    case message(MessageRowView)
    case chatState(ChatStateRow)
    case presence(PresenceRow)

    /// UTC milliseconds.
    var timestamp: Int64 {
        switch self {
        case .message(let view): view.timestamp
        case .chatState(let state): state.timestamp
        case .presence(let presence): presence.timestamp
        }
    }
}
