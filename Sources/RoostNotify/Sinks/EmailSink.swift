import Foundation
import RoostCore
internal import CCurl
import RoostHTTP

/// Mail through SMTP with libcurl: one mail per notification, or (digest_minutes > 0) one digest of
/// everything collected over that many minutes. STARTTLS or direct TLS is required unless the server is
/// on this machine.
actor EmailSink: NotificationSink {
    nonisolated let name: String
    nonisolated let typeName = "email"
    private let config: EmailSinkConfig
    private let timeoutSeconds: Int
    private let password: SecretResolver?
    private let log: @Sendable (LogLevel, String) -> Void
    private var digest: [OutgoingNotification] = []
    private var digestTimer: Task<Void, Never>?

    init(name: String, config: EmailSinkConfig, timeoutSeconds: Int, log: @escaping @Sendable (LogLevel, String) -> Void) {
        self.name = name
        self.config = config
        self.timeoutSeconds = timeoutSeconds
        self.log = log
        password = config.password.map { SecretResolver(source: $0, sinkName: name, key: "password") }
    }

    private nonisolated var host: String { URL(string: config.url)?.host ?? "the mail server" }

    func deliver(_ notification: OutgoingNotification) async throws(NotifyError) {
        guard config.digestMinutes > 0, notification.kind != .test else {
            try await send(Self.mail(for: notification, config: config))
            return
        }
        digest.append(notification)
        if digestTimer == nil {
            let minutes = config.digestMinutes
            digestTimer = Task {
                try? await Task.sleep(for: .seconds(minutes * 60))
                await self.sendDigest()
            }
        }
    }

    func shutdown() async {
        digestTimer?.cancel()
        await sendDigest()
    }

    private func sendDigest() async {
        digestTimer = nil
        guard !digest.isEmpty else { return }
        let items = digest
        digest = []
        do {
            try await send(Self.digestMail(items, config: config))
        } catch {
            log(.warning, "sink \(name): the digest of \(items.count) notifications was not sent: \(LogText.quote(error))")
        }
    }

    static func mail(for notification: OutgoingNotification, config: EmailSinkConfig) -> MailMessage {
        var body = notification.fullText
        if let conversation = notification.conversation, notification.kind == .message {
            body += "\n\n— \(notification.from ?? conversation), \(NotificationPayload.iso8601(notification.timestamp)) (account \(notification.account))"
        }
        let fromName = notification.kind == .message || notification.kind == .request ? notification.name : "Roost"
        return MailMessage(fromName: fromName, fromAddress: config.from, to: config.to, subject: notification.title,
                           body: body + "\n", date: notification.timestamp)
    }

    static func digestMail(_ items: [OutgoingNotification], config: EmailSinkConfig) -> MailMessage {
        let body = items.map { "\($0.title) — \(NotificationPayload.iso8601($0.timestamp))\n\($0.fullText)" }.joined(separator: "\n\n")
        return MailMessage(fromName: "Roost", fromAddress: config.from, to: config.to,
                           subject: "Roost: \(items.count) notification\(items.count == 1 ? "" : "s")", body: body + "\n", date: Timestamp.now())
    }

    private func send(_ mail: MailMessage) async throws(NotifyError) {
        let secret = try await password?.value()
        let config = self.config
        let host = self.host
        let timeout = timeoutSeconds
        let data = mail.rendered()
        let result: Result<Void, NotifyError> = await Deadline.blocking(
            seconds: timeout + 2, timedOut: .failure(.timedOut(sink: name, seconds: timeout))
        ) {
            let curl: CurlEasy
            do { curl = try CurlEasy() } catch { return .failure(.smtp(host: host, detail: "libcurl could not start a transfer: \(error)")) }
            curl.set(CURLOPT_URL, config.url)
            curl.set(CURLOPT_PROTOCOLS_STR, "smtp,smtps")
            curl.set(CURLOPT_MAIL_FROM, "<\(config.from)>")
            curl.set(CURLOPT_MAIL_RCPT, list: config.to.map { "<\($0)>" })
            curl.set(CURLOPT_USE_SSL, Int(config.tls == .none ? CURLUSESSL_NONE.rawValue : CURLUSESSL_ALL.rawValue))
            if let user = config.user { curl.set(CURLOPT_USERNAME, user) }
            if let secret { curl.set(CURLOPT_PASSWORD, secret) }
            if let caFile = config.caFile { curl.set(CURLOPT_CAINFO, caFile) }
            curl.set(CURLOPT_TIMEOUT, timeout)
            curl.set(CURLOPT_CONNECTTIMEOUT, min(timeout, 10))
            curl.setUpload(data)
            if let failure = curl.perform() { return .failure(.smtp(host: host, detail: failure)) }
            return .success(())
        }
        try result.get()
    }
}
