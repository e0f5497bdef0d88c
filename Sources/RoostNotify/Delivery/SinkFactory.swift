import RoostCore

/// Builds sinks from their config. Test hooks shorten retry delays.
struct SinkFactory {
    var desktopServerRetrySeconds = 60
    var webhookRetryBaseMilliseconds = 1000
    /// Tests substitute recording sinks here.
    var substitute: (@Sendable (SinkConfig) -> (any NotificationSink)?)?

    /// `replyCommand`: `[notify] reply_command`, for the desktop sink's `Reply` where the server has no inline reply.
    func make(_ config: SinkConfig, actions: (any NotificationActions)?, replyCommand: [String]? = nil,
              log: @escaping @Sendable (LogLevel, String) -> Void) -> any NotificationSink {
        if let sink = substitute?(config) { return sink }
        switch config.kind {
        case .desktop:
            return DesktopSink(name: config.name, timeoutSeconds: config.timeoutSeconds, actions: actions, replyCommand: replyCommand,
                               log: log, serverRetrySeconds: desktopServerRetrySeconds)
        case let .command(command):
            return CommandSink(name: config.name, argv: command.argv, timeoutSeconds: config.timeoutSeconds)
        case let .webhook(webhook):
            var sink = WebhookSink(name: config.name, config: webhook, timeoutSeconds: config.timeoutSeconds, actions: actions)
            sink.retryBaseMilliseconds = webhookRetryBaseMilliseconds
            return sink
        case let .email(email):
            return EmailSink(name: config.name, config: email, timeoutSeconds: config.timeoutSeconds, log: log)
        }
    }
}
