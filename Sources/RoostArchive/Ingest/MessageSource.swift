/// How the archive learnt of a message.
public enum MessageSource: String, Sendable, Codable, CaseIterable {
    case live, carbon, mam, `import`
}
