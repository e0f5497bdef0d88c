/// One `[sink NAME]` group, validated.
public struct SinkConfig: Sendable, Hashable {
    public var name: String
    public var kind: SinkKind
    /// Which notifications the sink receives (`events = message, request, invitation, summary, account`); the test
    /// event always.
    public var events: Set<SinkEventKind>
    /// How long one delivery (including retries for webhooks) may take.
    public var timeoutSeconds: Int

    public var typeName: String { kind.typeName }
}

/// `events = message, request, invitation, summary, account`.
public enum SinkEventKind: String, Sendable, CaseIterable {
    case message, request, invitation, summary
    /// An account waits for the user: it cannot log in, or another client keeps replacing it.
    case account
}

public enum SinkKind: Sendable, Hashable {
    case desktop
    case command(CommandSinkConfig)
    case webhook(WebhookSinkConfig)
    case email(EmailSinkConfig)

    public var typeName: String {
        switch self {
        case .desktop: "desktop"
        case .command: "command"
        case .webhook: "webhook"
        case .email: "email"
        }
    }
}

/// `type = command`: runs `command` (split into words like a shell would, but never run by one).
public struct CommandSinkConfig: Sendable, Hashable {
    public var argv: [String]
}

/// `type = webhook`: an HTTP(S) POST per notification.
public struct WebhookSinkConfig: Sendable, Hashable {
    public enum Format: String, Sendable, CaseIterable { case json, ntfy }
    public var url: String
    public var format: Format
    public var token: SecretSource?
    /// `header.NAME = value`, in name order.
    public var headers: [String: String]
    /// ntfy tags (`tags = speech_balloon`).
    public var tags: String
    public var retries: Int
    /// `public_url`: where `roost serve` is reached from the phone; when set, pushes carry Mark read and Accept/Deny
    /// buttons whose links (`public_url/act/TOKEN`) act once.
    public var publicURL: String?
}

/// `type = email`: SMTP through libcurl.
public struct EmailSinkConfig: Sendable, Hashable {
    public enum TLS: String, Sendable, CaseIterable { case starttls, direct, none }
    public var url: String
    public var tls: TLS
    public var from: String
    public var to: [String]
    public var user: String?
    public var password: SecretSource?
    public var caFile: String?
    /// 0: one mail per notification; else one digest mail at most every N minutes.
    public var digestMinutes: Int
}
