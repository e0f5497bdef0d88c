/// Whether the account received (`in`) or sent (`out`) a message.
public enum MessageDirection: String, Sendable, Codable, CaseIterable {
    case incoming = "in"
    case outgoing = "out"
}
