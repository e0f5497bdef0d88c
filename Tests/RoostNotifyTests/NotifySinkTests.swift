import Foundation
import Testing
@testable import RoostNotify

@Suite("Notify command, webhook and e-mail sinks (loopback servers)")
struct NotifySinkTests {
    private func notifier(sinks: [String: [String: String]], log: LogCollector = LogCollector(), retryMilliseconds: Int = 50) -> Notifier {
        var factory = SinkFactory()
        factory.webhookRetryBaseMilliseconds = retryMilliseconds
        let config = NotifyFixtures.config(["when": "always", "coalesce_seconds": "0", "body_length": "4000"], sinks: sinks)
        return Notifier(config: config, actions: nil, statePath: nil, log: log.log, clock: .system, idle: IdleProbe { nil }, factory: factory)
    }

    private func webhookRequests(_ path: String) -> [[String: Any]] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    @Test func commandGetsEnvironmentAndJSONWithoutAShell() async throws {
        let directory = NotifyFixtures.temporaryDirectory()
        let out = directory + "/captured.json"
        let trap = directory + "/pwned"
        let body = "hi $(touch \(trap)); `touch \(trap)` && touch \(trap) | cat > \(trap) 'quoted' \"double\" $HOME *"
        let notifier = notifier(sinks: ["run": ["type": "command",
                                                "command": "\(NotifyFixtures.python) \(NotifyFixtures.path("capture_command.py")) '\(out)' \"two words\""]])
        notifier.post(.message(NotifyFixtures.message(body)))
        await notifier.shutdown()
        let captured = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out))) as? [String: Any])
        let env = try #require(captured["env"] as? [String: String])
        #expect(env["ROOST_EVENT"] == "message")
        #expect(env["ROOST_BODY"] == body)
        #expect(env["ROOST_NAME"] == "Bob Example")
        #expect(env["ROOST_CONVERSATION"] == "bob@example.org")
        #expect(env["ROOST_ACCOUNT"] == "alice@example.org")
        #expect(captured["argv"] as? [String] == ["two words"])
        let stdin = try #require(captured["stdin"] as? String)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(stdin.utf8)) as? [String: Any])
        #expect(json["body"] as? String == body)
        #expect(json["event"] as? String == "message")
        #expect(json["count"] as? Int == 1)
        #expect(!FileManager.default.fileExists(atPath: trap))
    }

    @Test func failingCommandIsReportedByTest() async {
        let notifier = notifier(sinks: ["fail": ["type": "command", "command": "/bin/false"]])
        let results = await notifier.testAllSinks(only: "fail")
        guard case .failure(.commandFailed(_, let detail)) = results.first?.result else {
            Issue.record("expected a command failure")
            return
        }
        #expect(detail.contains("status 1"))
        await notifier.shutdown()
    }

    @Test func webhookPostsJSONWithTokenFromCommandAndRetries() async throws {
        let directory = NotifyFixtures.temporaryDirectory()
        let log = directory + "/requests.jsonl"
        let server = try BackgroundProcess([NotifyFixtures.python, NotifyFixtures.path("webhook_server.py"), log, "2"])
        defer { server.stop() }
        let port = server.firstLine()
        let logs = LogCollector()
        let notifier = notifier(sinks: ["hook": ["type": "webhook", "url": "http://127.0.0.1:\(port)/hook",
                                                 "token_command": "printf 'sekrit-token-123\\n'", "header.X-Roost-Test": "yes"]], log: logs)
        notifier.post(.message(NotifyFixtures.message("Grüße, 你好 <3")))
        await notifier.shutdown()
        let requests = webhookRequests(log)
        #expect(requests.count == 3)
        let last = try #require(requests.last)
        let headers = try #require(last["headers"] as? [String: String])
        #expect(headers["Authorization"] == "Bearer sekrit-token-123")
        #expect(headers["X-Roost-Test"] == "yes")
        #expect(headers["Content-Type"] == "application/json")
        #expect(last["path"] as? String == "/hook")
        let json = try #require(try JSONSerialization.jsonObject(with: Data((last["body"] as? String ?? "").utf8)) as? [String: Any])
        #expect(json["body"] as? String == "Grüße, 你好 <3")
        #expect(json["name"] as? String == "Bob Example")
        #expect(!logs.all.contains("sekrit"))
    }

    @Test func webhookRetriesServerErrorsThenGivesUpWithoutLeakingTheToken() async throws {
        let directory = NotifyFixtures.temporaryDirectory()
        let log = directory + "/requests.jsonl"
        let server = try BackgroundProcess([NotifyFixtures.python, NotifyFixtures.path("webhook_server.py"), log, "100", "500"])
        defer { server.stop() }
        let port = server.firstLine()
        let logs = LogCollector()
        let notifier = notifier(sinks: ["hook": ["type": "webhook", "url": "http://127.0.0.1:\(port)/", "token": "sekrit", "retries": "1"]], log: logs)
        let results = await notifier.testAllSinks()
        #expect(webhookRequests(log).count == 2, "a 5xx is retried (retries = 1)")
        guard case .failure(let error) = results.first?.result else {
            Issue.record("expected a failure")
            return
        }
        #expect(error == .http(host: "127.0.0.1", status: 500))
        #expect(!error.description.contains("sekrit"))
        await notifier.shutdown()
    }

    @Test func webhookGivesUpOnClientErrorsAtOnce() async throws {
        let directory = NotifyFixtures.temporaryDirectory()
        let log = directory + "/requests.jsonl"
        let server = try BackgroundProcess([NotifyFixtures.python, NotifyFixtures.path("webhook_server.py"), log, "100", "403"])
        defer { server.stop() }
        let port = server.firstLine()
        let notifier = notifier(sinks: ["hook": ["type": "webhook", "url": "http://127.0.0.1:\(port)/", "token": "sekrit", "retries": "3"]])
        let results = await notifier.testAllSinks()
        // A 4xx will not change by asking again: one request, however many retries are allowed.
        #expect(webhookRequests(log).count == 1)
        guard case .failure(let error) = results.first?.result else {
            Issue.record("expected a failure")
            return
        }
        #expect(error == .http(host: "127.0.0.1", status: 403))
        #expect(!error.description.contains("sekrit"))
        await notifier.shutdown()
    }

    @Test func ntfyFormatSendsTitleTagsAndText() async throws {
        let directory = NotifyFixtures.temporaryDirectory()
        let log = directory + "/requests.jsonl"
        let server = try BackgroundProcess([NotifyFixtures.python, NotifyFixtures.path("webhook_server.py"), log, "0"])
        defer { server.stop() }
        let port = server.firstLine()
        let notifier = notifier(sinks: ["phone": ["type": "webhook", "format": "ntfy", "url": "http://127.0.0.1:\(port)/roost-topic"]])
        notifier.post(.message(NotifyFixtures.message("see you at 8", name: "Zoë")))
        await notifier.shutdown()
        let request = try #require(webhookRequests(log).first)
        let headers = try #require(request["headers"] as? [String: String])
        #expect(headers["Title"] == "=?UTF-8?B?\(Data("Zoë".utf8).base64EncodedString())?=")
        #expect(headers["Tags"] == "speech_balloon")
        #expect(request["body"] as? String == "see you at 8")
    }

    private func parseMail(_ path: String) throws -> [String: Any] {
        let output = NotifyFixtures.run([NotifyFixtures.python, NotifyFixtures.path("parse_mail.py"), path]).output
        return try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
    }

    @Test func emailIsProperUTF8MIMEFromTheContact() async throws {
        let directory = NotifyFixtures.temporaryDirectory()
        let server = try BackgroundProcess([NotifyFixtures.python, NotifyFixtures.path("smtp_server.py"), directory])
        defer { server.stop() }
        let port = server.firstLine()
        let notifier = notifier(sinks: ["mail": ["type": "email", "url": "smtp://127.0.0.1:\(port)", "tls": "none",
                                                 "from": "roost@example.org", "to": "alice@example.org"]])
        let body = "Grüße aus Köln — 你好\n.\nA line with a single dot above, and a very long line " + String(repeating: "ä", count: 200)
        notifier.post(.message(NotifyFixtures.message(body, name: "Zoë \"Z\" Müller-Lüdenscheidt")))
        await notifier.shutdown()
        let mail = try parseMail(directory + "/1.eml")
        #expect(mail["subject"] as? String == "Zoë \"Z\" Müller-Lüdenscheidt")
        #expect(mail["from_name"] as? String == "Zoë \"Z\" Müller-Lüdenscheidt")
        #expect(mail["from_address"] as? String == "roost@example.org")
        #expect(mail["content_type"] as? String == "text/plain")
        #expect(mail["charset"] as? String == "utf-8")
        // Text travels in MIME canonical form, with CRLF line ends.
        let text = (mail["body"] as? String ?? "").replacingOccurrences(of: "\r\n", with: "\n")
        #expect(text.hasPrefix(body + "\n"))
        #expect(mail["defects"] as? [String] == [])
        #expect(mail["has_date"] as? Bool == true)
        #expect(mail["has_message_id"] as? Bool == true)
        let envelope = try String(contentsOfFile: directory + "/1.envelope", encoding: .utf8)
        #expect(envelope == "roost@example.org\nalice@example.org\n")
    }

    @Test func emailDigestSendsOneMailAtShutdown() async throws {
        let directory = NotifyFixtures.temporaryDirectory()
        let server = try BackgroundProcess([NotifyFixtures.python, NotifyFixtures.path("smtp_server.py"), directory])
        defer { server.stop() }
        let port = server.firstLine()
        let notifier = notifier(sinks: ["mail": ["type": "email", "url": "smtp://localhost:\(port)", "tls": "none", "digest_minutes": "30",
                                                 "from": "roost@example.org", "to": "alice@example.org"]])
        notifier.post(.message(NotifyFixtures.message("first", from: "a@example.org", name: "A")))
        notifier.post(.message(NotifyFixtures.message("second", from: "b@example.org", name: "B")))
        await notifier.flush()
        #expect(!FileManager.default.fileExists(atPath: directory + "/1.eml"))
        await notifier.shutdown()
        let mail = try parseMail(directory + "/1.eml")
        #expect(mail["subject"] as? String == "Roost: 2 notifications")
        #expect((mail["body"] as? String)?.contains("first") == true)
        #expect((mail["body"] as? String)?.contains("second") == true)
        #expect(!FileManager.default.fileExists(atPath: directory + "/2.eml"))
    }
}

/// A webhook sink with `public_url` (issue 32, 3): Mark read on a message, Accept/Deny on a request, each a link of its own.
@Suite("Webhook sink: push buttons")
struct WebhookButtonTests {
    private func sink(_ format: WebhookSinkConfig.Format, publicURL: String?) -> WebhookSink {
        WebhookSink(name: "phone", config: WebhookSinkConfig(url: "https://ntfy.example/topic", format: format, token: nil, headers: [:],
                                                             tags: "", retries: 0, publicURL: publicURL),
                    timeoutSeconds: 5, actions: RecordingActions())
    }

    private func notification(_ kind: OutgoingNotification.Kind) -> OutgoingNotification {
        OutgoingNotification(kind: kind, account: "alice@example.org", conversation: "bob@example.org", from: "bob@example.org/phone",
                             name: "Bob", title: "Bob", text: "hi", body: "hi", timestamp: 1_768_071_731_250)
    }

    @Test func ntfyPushesCarryHTTPActions() {
        let (_, message) = sink(.ntfy, publicURL: "https://roost.example.org/").request(for: notification(.message), token: nil)
        #expect(message.contains("Actions: http, Mark read, https://roost.example.org/act/read~bob@example.org, method=POST, clear=true"))
        let (_, request) = sink(.ntfy, publicURL: "https://roost.example.org").request(for: notification(.request), token: nil)
        #expect(request.contains("Actions: http, Accept, https://roost.example.org/act/accept~bob@example.org, method=POST, clear=true; "
                                 + "http, Deny, https://roost.example.org/act/deny~bob@example.org, method=POST, clear=true"))
        let (_, summary) = sink(.ntfy, publicURL: "https://roost.example.org").request(for: notification(.summary), token: nil)
        #expect(!summary.contains { $0.hasPrefix("Actions:") })
        let (_, without) = sink(.ntfy, publicURL: nil).request(for: notification(.message), token: nil)
        #expect(!without.contains { $0.hasPrefix("Actions:") })
    }

    @Test func jsonPushesCarryAnActionsArray() throws {
        let (body, _) = sink(.json, publicURL: "https://roost.example.org").request(for: notification(.message), token: nil)
        let object = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        let actions = try #require(object["actions"] as? [[String: String]])
        #expect(actions == [["action": "read", "label": "Mark read", "method": "POST", "url": "https://roost.example.org/act/read~bob@example.org"]])
        let (plain, _) = sink(.json, publicURL: nil).request(for: notification(.message), token: nil)
        #expect((try JSONSerialization.jsonObject(with: plain) as? [String: Any])?["actions"] == nil)
    }
}
