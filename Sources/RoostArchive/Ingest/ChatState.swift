/// XEP-0085 chat states.
public enum ChatState: String, Sendable, Codable, CaseIterable {
    case active, composing, paused, inactive, gone
}
