import Foundation
import Testing
import RoostArchive
import RoostTestSupport

/// Issue 31, item 4: one query selects the same messages in `roost search`, `roost export` and the web view's
/// search (`roost serve`, `/search`) — one statement builder (`MessageStatement`) and one reading account
/// (`--account`, else `default_account`) for all three, on an archive of two accounts.
@Suite("One query, the same messages in search, export and the web view", .serialized)
struct SameMatchesEverywhereTests {
    static let other = "other@example.org"

    /// Two accounts with the word in both, and messages that do not match; the config's `default_account` is
    /// the first account.
    func sandbox() throws -> WebSandbox {
        let sandbox = try WebSandbox("roost-same")
        func message(_ account: String, _ body: String, _ seconds: Int64) -> ArchiveEvent {
            let id = UUID().uuidString
            return .message(MessageRecord(account: account, conversation: "alice@example.com", direction: .incoming, kind: .chat,
                                          from: "alice@example.com/phone", to: account, senderName: nil, body: body,
                                          timestamp: WebSandbox.t0 + seconds * 1000, stanzaId: "s-\(id)", stanzaIdBy: account,
                                          stanzaIdTrusted: true, messageId: id))
        }
        try sandbox.commit([
            message(WebSandbox.account, "an apple a day", 0),
            message(WebSandbox.account, "apple pie tonight?", 1),
            message(WebSandbox.account, "pears only", 2),
            message(Self.other, "the apple tree", 3),
            message(Self.other, "no fruit here", 4),
        ])
        try "[general]\ndefault_account = \(WebSandbox.account)\n[archive]\npath = \(sandbox.archive)\n"
            .write(toFile: sandbox.config, atomically: true, encoding: .utf8)
        return sandbox
    }

    /// The stanza ids of what each of the three finds for `query`, with `extra` (`--account …`) on each command line,
    /// and the web view's results page.
    func found(_ sandbox: WebSandbox, _ query: String, _ extra: [String]) async throws
        -> (search: Set<String>, export: Set<String>, web: Set<String>, page: String) {
        let search = try RoostBinary.run(["search", "--config", sandbox.config, "--json", "--limit", "0"] + extra + [query])
        #expect(search.status == 0, "\(search.stderr)")
        let export = try RoostBinary.run(["export", "--config", sandbox.config, "--format", "jsonl"] + extra + [query])
        #expect(export.status == 0, "\(export.stderr)")
        let served = try sandbox.serve(extra)
        defer { served.process.stop() }
        let page = try await WebClient.get(served.url, path: "/search?q=" + (query.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? query))
        #expect(page.status == 200)
        let rows = page.body.matches(of: /id="m(\d+)"/).map { String($0.output.1) }
        var web = Set<String>()
        for row in rows {
            web.insert(try ArchiveCount.sqlite(sandbox.archive, "SELECT stanza_id FROM messages WHERE id = \(row)")
                .trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return (Set(search.jsonLines.compactMap { $0["stanza_id"] as? String }),
                Set(export.jsonLines.filter { $0["event"] as? String == "message" }.compactMap { $0["stanza_id"] as? String }), web,
                page.body)
    }

    func stanzaIDs(_ sandbox: WebSandbox, account: String) throws -> Set<String> {
        Set(try ArchiveCount.sqlite(sandbox.archive, """
            SELECT stanza_id FROM messages WHERE body LIKE '%apple%' AND account_id = (SELECT id FROM accounts WHERE jid = '\(account)')
            """).split(separator: "\n").map { String($0) })
    }

    @Test func theDefaultAccountKeepsAllThreeToIt() async throws {
        let sandbox = try sandbox()
        let expected = try stanzaIDs(sandbox, account: WebSandbox.account)
        #expect(expected.count == 2)
        let found = try await found(sandbox, "apple", [])
        #expect(found.search == expected, "roost search")
        #expect(found.export == expected, "roost export")
        #expect(found.web == expected, "the web view's search")
        #expect(found.page.contains("2 results in account \(WebSandbox.account)"), "the page says which account it searched")
    }

    @Test func anAccountGivenKeepsAllThreeToIt() async throws {
        let sandbox = try sandbox()
        let expected = try stanzaIDs(sandbox, account: Self.other)
        #expect(expected.count == 1)
        let found = try await found(sandbox, "apple", ["--account", Self.other])
        #expect(found.search == expected, "roost search --account")
        #expect(found.export == expected, "roost export --account")
        #expect(found.web == expected, "roost serve --account: the web view's search")
        #expect(found.page.contains("1 result in account \(Self.other)"), "the page says which account it searched")
    }
}
