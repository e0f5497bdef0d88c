import Foundation
import Testing
import RoostTestSupport
@testable import RoostXMPP

/// The engine against the real server started by contrib/scripts/test (Prosody, then ejabberd); the other
/// party of message round trips is slixmpp (contrib/scripts/xmpp-peer.py).
@Suite("End to end: engine against the server", .requires(.server))
struct EndToEndEngineTests {
    let server: TestServer

    init() throws {
        try TestRequirement.check(.server)
        server = try TestServer.require()
    }

    private func register() async throws -> (JID, String) {
        let (client, jid, password) = try await server.registeredClient()
        await client.disconnect()
        return (jid, password)
    }

    @Test func defaultLoginPicksTheStrongestMechanism() async throws {
        let (jid, password) = try await register()
        let client = XMPPClient(configuration: server.configuration(for: jid, password: password))
        let info = try await client.connect()
        #expect(info.mechanism.hasPrefix("SCRAM-"))
        #expect(info.streamManagement)
        #expect(info.tlsPeerFingerprint != nil)
        await client.disconnect()
    }

    @Test func directTLSLogin() async throws {
        _ = try #require(server.directTLSPort, "the server's env names no direct TLS port")
        let (jid, password) = try await register()
        let client = XMPPClient(configuration: server.configuration(for: jid, password: password, tls: .direct))
        let info = try await client.connect()
        #expect(info.boundJID.bare == jid)
        await client.disconnect()
    }

    @Test func wrongPasswordIsAnAuthenticationFailureWithoutTheSecret() async throws {
        let (jid, _) = try await register()
        let client = XMPPClient(configuration: server.configuration(for: jid, password: "wrong-password-xyz"))
        do {
            _ = try await client.connect()
            Issue.record("login with a wrong password succeeded")
        } catch {
            #expect(error.isAuthenticationFailure, "\(error)")
            #expect(!error.description.contains("wrong-password-xyz"))
        }
    }

    @Test func untrustedCertificateIsRefused() async throws {
        // Without the test CA, the system store cannot vouch for the server.
        var config = server.configuration(for: server.uniqueJID(), password: "x")
        config.caFile = nil
        let client = XMPPClient(configuration: config)
        do {
            _ = try await client.connect()
            Issue.record("connected to an untrusted server")
        } catch {
            guard case .tls(let tls) = error, case .untrusted = tls else { Issue.record("wrong error: \(error)"); return }
            #expect(error.description.contains("ca_file") || error.description.contains("fingerprint"))
        }
    }

    @Test func wrongHostNameIsRefused() async throws {
        // The test server serves this host with the main domain's certificate, which does not name it.
        let wrongHost = try #require(server.wrongHost, "the server's env names no wrong host")
        let config = server.configuration(for: try JID("someone@\(wrongHost)"), password: "x")
        let client = XMPPClient(configuration: config)
        do {
            _ = try await client.connect()
            Issue.record("connected despite a host name mismatch")
        } catch {
            guard case .tls(let tls) = error, case .hostnameMismatch = tls else { Issue.record("wrong error: \(error)"); return }
        }
    }

    @Test func pinnedFingerprintMismatchIsRefused() async throws {
        var config = server.configuration(for: server.uniqueJID(), password: "x")
        config.pinnedSHA256 = String(repeating: "ab", count: 32)
        let client = XMPPClient(configuration: config)
        do {
            _ = try await client.connect()
            Issue.record("connected despite a pin mismatch")
        } catch {
            guard case .tls(let tls) = error, case .fingerprintMismatch = tls else { Issue.record("wrong error: \(error)"); return }
        }
    }

    @Test func registrationPasswordChangeAndCancellation() async throws {
        let (client, jid, password) = try await server.registeredClient()
        // Registering the same name again is a conflict.
        let again = XMPPClient(configuration: server.configuration(for: jid, password: password))
        do {
            _ = try await again.registerAccount()
            Issue.record("registered an existing account")
        } catch {
            guard case .registrationFailed(let e) = error else { Issue.record("wrong error: \(error)"); return }
            #expect(e.condition == "conflict")
        }
        let changed = try await client.request(Registration.changePasswordRequest(account: jid, newPassword: "new-\(password)"))
        #expect(changed.type == .result)
        await client.disconnect()
        let withNew = XMPPClient(configuration: server.configuration(for: jid, password: "new-\(password)"))
        _ = try await withNew.connect()
        _ = try? await withNew.request(Registration.cancelRequest(account: jid), timeout: .seconds(5))
        await withNew.disconnect()
        let gone = XMPPClient(configuration: server.configuration(for: jid, password: "new-\(password)"))
        await #expect(throws: ClientError.self) { _ = try await gone.connect() }
    }

    @Test func rosterGetSetAndPush() async throws {
        let (client, jid, _) = try await server.registeredClient()
        let events = EventCollector(client)
        let friend = server.uniqueJID("friend")
        // Pushes go to "interested resources" only: those that asked for the roster (RFC 6121 §2.1.6).
        _ = try await client.request(Roster.getRequest())
        _ = try await client.request(Roster.setRequest(RosterItem(jid: friend, name: "Friend", groups: ["Pals"])))
        let push = try await events.waitForStanza { $0.name == "iq" && $0.child("query", namespace: Namespace.roster) != nil }
        #expect(Roster.isLegitimatePush(IQ(push), account: jid))
        let roster = try await client.request(Roster.getRequest())
        #expect(Roster.items(in: roster).contains { $0.jid == friend && $0.name == "Friend" && $0.groups == ["Pals"] })
        await client.disconnect()
    }

    @Test func messageRoundTripWithChatStatesBothWaysWithSlixmpp() async throws {
        let (roost, _, _) = try await server.registeredClient("alice")
        let roostEvents = EventCollector(roost)
        let peer = try await XMPPPeer.registered(on: server, "bob")
        // Roost's resources have priority -1, so a message to the bare JID would go to offline storage
        // (RFC 6121 §8.5.2.1.1); address the bound resource.
        let roostJID = try #require(roost.boundJID)

        // slixmpp → Roost: a bare chat state, then a message with state and thread.
        try await peer.call("chatstate", ["to": roostJID.description, "state": "composing"])
        let text = "héllo 你好 👋 <b>&amp;</b>"
        try await peer.send(to: roostJID, body: text, thread: "thread-1", chatState: "active")
        let received = Message(try await roostEvents.waitForStanza { Message($0).body != nil })
        #expect(received.body == text)
        #expect(received.chatState == .active)
        #expect(received.thread == "thread-1")
        #expect(received.from == peer.boundJID)
        let state = Message(try await roostEvents.waitForStanza { Message($0).chatState == .composing })
        #expect(state.body == nil)
        // The server stamps messages with a stanza-id from the account's archive (XEP-0359 + MAM).
        #expect(received.stanzaIDs.id(by: roostJID.bare) != nil)

        // Roost → slixmpp: what Roost serialises, another implementation reads back the same.
        let answer = "réponse 回复 <i>&</i> \"quoted\" 'apos'"
        var reply = Message(to: peer.boundJID, type: .chat, body: answer)
        reply.setChatState(.active)
        reply.setThread("thread-1")
        try roost.send(reply)
        let got = try await peer.message { $0["body"] == answer }
        #expect(got["chatstate"] == "active")
        #expect(got["thread"] == "thread-1")
        #expect(got["from"] == roostJID.description)
        var paused = Message(to: peer.boundJID, type: .chat)
        paused.setChatState(.paused)
        try roost.send(paused)
        let pausedEvent = try await peer.message { $0["chatstate"] == "paused" }
        #expect(pausedEvent["body"] == nil)
        await peer.stop()
        await roost.disconnect()
    }

    @Test func resourceConflictIsAStreamError() async throws {
        let (first, jid, password) = try await server.registeredClient(resource: "same")
        let firstEvents = EventCollector(first)
        let second = XMPPClient(configuration: server.configuration(for: jid, password: password, resource: "same"))
        _ = try await second.connect()
        let end = try await firstEvents.waitForEvent { if case .disconnected = $0 { true } else { false } }
        guard case .disconnected(let error?) = end, case .streamError(let condition, _) = error else {
            Issue.record("expected a stream error, got \(end)")
            return
        }
        #expect(condition == "conflict")
        await second.disconnect()
    }

    /// `disconnect()` is a logout the server reads to the end (unavailable, `</stream:stream>`, then TLS
    /// close_notify), so it ends the session: nothing is left to resume. A logout it never read (the goodbye
    /// written after close_notify, as it once was) looks like a dropped connection, and the server kept the
    /// session, available, for its hibernation time. Several logins, as that loss depended on how the writer
    /// batched the last bytes.
    @Test func logoutEndsTheServerSessionSoNothingIsLeftToResume() async throws {
        let (jid, password) = try await register()
        for round in 1...3 {
            let client = XMPPClient(configuration: server.configuration(for: jid, password: password, resource: "logout"))
            let session = try await client.connect()
            #expect(session.streamManagement)
            let state = try #require(client.resumptionState, "the server offers resumption")
            await client.disconnect()
            let again = XMPPClient(configuration: server.configuration(for: jid, password: password, resource: "logout"), resumption: state)
            let next = try await again.connect()
            #expect(!next.resumed, "round \(round): the session after a logout was resumed, so the server never read the logout")
            await again.disconnect()
        }
    }

    @Test func discoOfServerAndOwnAccount() async throws {
        let (client, jid, _) = try await server.registeredClient()
        let serverInfo = try await client.request(Disco.infoRequest(to: try JID(server.domain)))
        let info = try #require(Disco.info(in: serverInfo))
        #expect(info.supports(Namespace.carbons))
        let own = try await client.request(Disco.infoRequest(to: jid))
        #expect(Disco.info(in: own)?.supports(Namespace.mam) == true)
        let carbons = try await client.request(Carbons.enableRequest())
        #expect(carbons.type == .result)
        await client.disconnect()
    }

    @Test func iqPingRoundTripAndUnknownRequestGetsAnError() async throws {
        let (client, _, _) = try await server.registeredClient()
        let domain = try JID(server.domain)
        let pong = try await client.request(Ping.request(to: domain))
        #expect(pong.type == .result)
        #expect(pong.from == domain)
        do {
            _ = try await client.request(IQ(type: .get, to: domain, payload: Element("nonsense", namespace: "urn:roost:nothing")))
            Issue.record("expected an error answer")
        } catch {
            guard case .stanzaError(let e) = error else { Issue.record("wrong error \(error)"); return }
            #expect(["service-unavailable", "feature-not-implemented"].contains(e.condition))
        }
        await client.disconnect()
    }
}
