import Foundation
import Synchronization
import Testing
import RoostCore
@testable import RoostArchive
import RoostNotify
@testable import RoostXMPP
@testable import RoostAgent

private func stanza(_ text: String) -> Element {
    let parser = XMLStreamParser()
    let events = try! parser.feed(Array("<stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' version='1.0'>\(text)".utf8))
    for case .stanza(let element) in events { return element }
    fatalError("no stanza")
}

/// Issue 17 in the agent: one config validation for `roost config` and `roost run`, inline comments, the
/// friend the user added answered without the user, progress and activity lines, and the redacted XML trace.
@Suite("Everyday use: agent")
struct EverydayAgentTests {
    @Test func configRefusesWhatRunRefuses() throws {
        let sandbox = try ConfigSandbox()
        let problems = sandbox.problems("""
            [account me@example.org]
            password_command = echo pw

            [notify]
            when = sometimes
            quiet_hours = 22-7

            [sink x]
            type = webhok
            """)
        let lines = problems.compactMap(\.line).sorted()
        #expect(lines == [5, 6, 9], "\(problems)")
        #expect(problems.compactMap(\.key).sorted() == ["quiet_hours", "type", "when"], "\(problems)")
    }

    /// One grammar for plain values in every group: `[notify]` takes the booleans `[general]` takes (`on`/`off`
    /// were refused there once) and says what it got, as the other groups do.
    @Test func notifyValuesReadAsEveryOtherGroupsDo() throws {
        let sandbox = try ConfigSandbox()
        let config = try sandbox.load("[archive]\nkeep_retracted = off\n[notify]\ncatch_up_summary = off\nshow_body = on\n"
                                      + "[account me@example.org]\npassword_command = echo x\n")
        let (notify, problems) = NotifyConfig.parse(notify: config.notify, sinks: config.sinks)
        #expect(problems.isEmpty, "\(problems)")
        #expect(notify.catchUpSummary == false && notify.showBody == true)
        let wrong = sandbox.problems("[notify]\nidle_seconds = soon\n[account me@example.org]\npassword_command = echo x\n")
        #expect(wrong.map(\.message) == ["expected an integer from 0 to 86400, got 'soon'"], "\(wrong)")
    }

    @Test func commentsAfterValues() throws {
        let sandbox = try ConfigSandbox()
        let config = try sandbox.load("""
            [general]
            default_account = me@example.org   # reading commands keep to it
            [account me@example.org]
            password_command = pass show xmpp\\#1 ; the entry
            host = xmpp.example.org	# a tab before it
            resource = desk;top
            #port = 5223
            """)
        let account = try #require(config.account("me@example.org"))
        #expect(account.host == "xmpp.example.org")
        #expect(account.password == .command("pass show xmpp#1"), "\\# keeps a literal #")
        #expect(account.resource == "desk;top", "only after a space")
        #expect(config.defaultAccount == "me@example.org")
        // Problems still name the right line.
        let problems = sandbox.problems("[account me@example.org]\npassword = x\nport = 99999   # too big\n")
        #expect(problems.first?.line == 3)
        #expect(ConfigLineIndex.strip(line: "key = a # b") == "key = a")
        #expect(ConfigLineIndex.strip(line: "# key = a # b") == "# key = a # b")
        #expect(ConfigLineIndex.strip(line: "key = a\\\\ # b") == "key = a\\\\")
        // A file written on Windows (CRLF) too: its lines were once one line to the comment stripper.
        let crlf = try sandbox.load("[general]\r\ndefault_account = me@example.org   # mine\r\n[account me@example.org]\r\n"
                                    + "password_command = echo x\r\nhost = xmpp.example.org # the server\r\n")
        #expect(crlf.defaultAccount == "me@example.org")
        #expect(crlf.account("me@example.org")?.host == "xmpp.example.org")
    }

    @Test func theFriendTheUserAddedIsAnsweredAtOnce() throws {
        var context = RoutingContext(account: try JID("alice@roost.test"), trustsOwnStanzaIDs: true, displayNames: [:])
        let request = stanza("<presence from='bob@roost.test/phone' type='subscribe'/>")
        let stranger = StanzaRouter.route(request, context: context, now: 1)
        #expect(stranger.replies.isEmpty)
        #expect(stranger.notes.contains { if case .subscriptionRequest = $0 { true } else { false } })

        context.noteApproval(of: RosterItem(jid: try JID("bob@roost.test"), subscription: .none, askPending: true))
        let friend = StanzaRouter.route(request, context: context, now: 2)
        let reply = try #require(friend.replies.first)
        #expect(reply.name == "presence" && reply[attribute: "type"] == "subscribed" && reply[attribute: "to"] == "bob@roost.test")
        #expect(!friend.notes.contains { if case .subscriptionRequest = $0 { true } else { false } }, "no request to notify")
        let answers = friend.events.compactMap { event -> SubscriptionRecord? in if case .subscription(let s) = event { s } else { nil } }
        #expect(answers.map(\.kind) == [.subscribe, .subscribed], "the request and its answer are archived")
        #expect(answers.last?.direction == .outgoing)

        // Once both ways, or removed, the approval is gone.
        context.noteApproval(of: RosterItem(jid: try JID("bob@roost.test"), subscription: .both))
        #expect(context.approvedContacts.isEmpty)
        context.noteApproval(of: RosterItem(jid: try JID("bob@roost.test"), subscription: .to))
        #expect(!context.approvedContacts.isEmpty)
        context.noteApproval(of: RosterItem(jid: try JID("bob@roost.test"), subscription: .remove))
        #expect(context.approvedContacts.isEmpty)
    }

    @Test func progressIsOneLineOnATerminalAndMilestonesInALog() {
        let lines = Mutex<[String]>([])
        let log = Logger(level: .info) { line in lines.withLock { $0.append(line) } }
        for page in 1...40 { log.progress("page \(page)", milestone: page % 4 == 0) }
        let written = lines.withLock { $0 }
        #expect(written.count == 10, "a log gets the milestones only")
        #expect(written.last?.hasSuffix("page 40") == true)
        let quiet = Logger(level: .warning) { line in lines.withLock { $0.append(line) } }
        quiet.progress("hidden", milestone: true)
        #expect(lines.withLock { $0.count } == 10)
    }

    @Test func activityCountsNewMessagesOnly() async throws {
        let folder = NSTemporaryDirectory() + "roost-activity-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let writer = try ArchiveWriter(path: folder + "/archive.sqlite", durability: .off)
        let pipeline = IngestPipeline(writer: writer, log: Logger(level: .error))
        func message(_ id: String, _ direction: MessageDirection, _ peer: String) -> ArchiveEvent {
            .message(MessageRecord(account: "me@example.org", conversation: peer, direction: direction,
                                   from: direction == .incoming ? peer + "/x" : "me@example.org/roost", to: "me@example.org",
                                   body: id, timestamp: 1_768_478_400_000, messageId: id))
        }
        await pipeline.submit([message("1", .incoming, "a@x.org"), message("2", .outgoing, "a@x.org"), message("3", .incoming, "b@x.org")])
        await pipeline.submit([message("1", .incoming, "a@x.org")])
        await pipeline.flush()
        let activity = pipeline.takeActivity()
        #expect(activity.incoming == 2 && activity.outgoing == 1, "the duplicate is not counted")
        #expect(activity.conversations.count == 2)
        #expect(pipeline.takeActivity() == IngestPipeline.Activity(), "taking it starts afresh")
        await pipeline.drainAndStop()
    }

    @Test func theXMLTraceHidesSecrets() {
        let auth = XMLTrace.redacted(sent: "<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='PLAIN'>AGFsaWNlAHNlY3JldA==</auth>")
        #expect(!auth.contains("AGFsaWNl") && auth.contains("[redacted]") && auth.contains("mechanism='PLAIN'"))
        let change = XMLTrace.redacted(sent: "<iq type='set'><query xmlns='jabber:iq:register'><username>a</username><password>hunter2</password></query></iq>")
        #expect(!change.contains("hunter2") && change.contains("<username>a</username>"))
        let challenge = XMLTrace.text(of: .stanza(stanza("<challenge xmlns='urn:ietf:params:xml:ns:xmpp-sasl'>cj1zZWNyZXQ=</challenge>")))
        #expect(!challenge.contains("cj1zZWNyZXQ=") && challenge.contains("[redacted]"))
        let message = XMLTrace.text(of: .stanza(stanza("<message from='bob@roost.test'><body>hello</body></message>")))
        #expect(message.contains("hello"), "everything else is shown")
    }
}

/// The catch-up's backlog keeps what its summary reads, not the bodies: a long catch-up must not hold every text.
@Suite("Catch-up backlog")
struct MessageBacklogTests {
    @Test func keepsWhoWhereAndWhenButNoBody() {
        let backlog = MessageBacklog()
        let long = String(repeating: "a long message ", count: 4000)
        backlog.add([IncomingMessage(account: "me@example.org", conversation: "room@muc.example.org", from: "room@muc.example.org/bob",
                                     displayName: "bob", body: long, isGroupchat: true, mentionsUser: true, timestamp: 42,
                                     avatarPath: "/tmp/bob.png")])
        let kept = backlog.take().messages
        #expect(kept.count == 1)
        #expect(kept.first?.body == "" && kept.first?.avatarPath == nil)
        #expect(kept.first?.conversation == "room@muc.example.org" && kept.first?.displayName == "bob")
        #expect(kept.first?.isGroupchat == true && kept.first?.mentionsUser == true && kept.first?.timestamp == 42)
        #expect(backlog.take().messages.isEmpty, "taken once")
    }

    /// Bounded: beyond `limit` the oldest go and are counted; the newest stay, in order.
    @Test func keepsTheNewestUpToItsLimitAndCountsTheRest() {
        let backlog = MessageBacklog()
        let extra = 25
        for batch in stride(from: 0, to: MessageBacklog.limit + extra, by: 1000) {
            backlog.add((batch..<min(batch + 1000, MessageBacklog.limit + extra)).map { n in
                IncomingMessage(account: "me@example.org", conversation: "bob@example.org", from: "bob@example.org/phone",
                                displayName: "bob", body: "m\(n)", isGroupchat: false, mentionsUser: false, timestamp: Int64(n))
            })
        }
        let taken = backlog.take()
        #expect(taken.messages.count == MessageBacklog.limit && taken.dropped == extra)
        #expect(taken.messages.first?.timestamp == Int64(extra) && taken.messages.last?.timestamp == Int64(MessageBacklog.limit + extra - 1))
        #expect(backlog.take().dropped == 0, "taking starts the count afresh")
    }
}
