import Foundation
internal import CCurl
import RoostCore
import RoostHTTP

/// An HTTP(S) POST per notification through libcurl: JSON, or ntfy's plain text with Title/Tags headers.
/// Network errors, 429 and 5xx are retried with exponential backoff; other answers are final.
struct WebhookSink: NotificationSink {
    let name: String
    let typeName = "webhook"
    let config: WebhookSinkConfig
    let timeoutSeconds: Int
    let token: SecretResolver?
    /// Signs the links of the buttons (with `public_url`).
    let actions: (any NotificationActions)?
    var retryBaseMilliseconds = 1000

    init(name: String, config: WebhookSinkConfig, timeoutSeconds: Int, actions: (any NotificationActions)? = nil) {
        self.name = name
        self.config = config
        self.timeoutSeconds = timeoutSeconds
        self.actions = actions
        token = config.token.map { SecretResolver(source: $0, sinkName: name, key: "token") }
    }

    private var host: String { URL(string: config.url)?.host ?? "the webhook" }

    func deliver(_ notification: OutgoingNotification) async throws(NotifyError) {
        let secret = try await token?.value()
        let (body, headers) = request(for: notification, token: secret)
        var attempt = 0
        while true {
            let result = await post(body: body, headers: headers)
            switch result {
            case .success: return
            case let .failure(error):
                attempt += 1
                guard attempt <= config.retries, Self.isRetryable(error) else { throw error }
                let delay = retryBaseMilliseconds << (attempt - 1)
                try? await Task.sleep(for: .milliseconds(delay))
            }
        }
    }

    func request(for notification: OutgoingNotification, token: String?) -> (Data, [String]) {
        var headers: [String] = []
        let body: Data
        switch config.format {
        case .json:
            body = NotificationPayload.json(notification, actions: buttons(for: notification))
            headers.append("Content-Type: application/json")
        case .ntfy:
            body = Data(notification.fullText.utf8)
            headers.append("Content-Type: text/plain; charset=utf-8")
            headers.append("Title: \(EncodedWords.header(notification.title).replacingOccurrences(of: "\r\n ", with: " "))")
            if !config.tags.isEmpty { headers.append("Tags: \(config.tags)") }
            // ntfy's `http` actions: the phone POSTs to the link itself, without opening anything.
            let buttons = buttons(for: notification)
            if !buttons.isEmpty {
                headers.append("Actions: " + buttons.map { "http, \($0.label), \($0.url), method=POST, clear=true" }.joined(separator: "; "))
            }
            if let priority = notification.priority { headers.append("Priority: \(priority.ntfy)") }
        }
        if let token { headers.append("Authorization: Bearer \(token)") }
        for name in config.headers.keys.sorted() { headers.append("\(name): \(config.headers[name]!)") }
        // libcurl would otherwise send `Expect: 100-continue` for larger bodies and wait for the server.
        headers.append("Expect:")
        return (body, headers)
    }

    /// Mark read on a message, Accept and Deny on a contact request, each with a link of its own (`public_url/act/TOKEN`);
    /// none without `public_url` or for other notifications.
    func buttons(for notification: OutgoingNotification) -> [NotificationPayload.Button] {
        guard let base = config.publicURL, let actions, let target = notification.conversation else { return [] }
        let offered: [(String, String)]
        switch notification.kind {
        case .message: offered = [("read", "Mark read")]
        case .request: offered = [("accept", "Accept"), ("deny", "Deny")]
        default: offered = []
        }
        let root = base.hasSuffix("/") ? String(base.dropLast()) : base
        return offered.compactMap { action, label in
            actions.pushActionToken(action, account: notification.account, target: target).map {
                NotificationPayload.Button(action: action, label: label, url: "\(root)/act/\($0)")
            }
        }
    }

    private func post(body: Data, headers: [String]) async -> Result<Void, NotifyError> {
        let url = config.url
        let host = self.host
        let timeout = timeoutSeconds
        return await Deadline.blocking(seconds: timeout + 2, timedOut: .failure(.timedOut(sink: name, seconds: timeout))) {
            let curl: CurlEasy
            do { curl = try CurlEasy() } catch { return .failure(.transport(host: host, detail: "libcurl could not start a transfer: \(error)")) }
            curl.set(CURLOPT_URL, url)
            curl.set(CURLOPT_PROTOCOLS_STR, "http,https")
            curl.set(CURLOPT_POST, 1)
            curl.setPostBody(body)
            curl.set(CURLOPT_HTTPHEADER, list: headers)
            curl.set(CURLOPT_USERAGENT, "Roost")
            curl.set(CURLOPT_TIMEOUT, timeout)
            curl.set(CURLOPT_CONNECTTIMEOUT, min(timeout, 10))
            if let failure = curl.perform() { return .failure(.transport(host: host, detail: failure)) }
            let status = curl.responseCode
            return (200..<300).contains(status) ? .success(()) : .failure(.http(host: host, status: status))
        }
    }

    private static func isRetryable(_ error: NotifyError) -> Bool {
        switch error {
        case .transport, .timedOut: true
        case let .http(_, status): status == 429 || status >= 500
        default: false
        }
    }
}
