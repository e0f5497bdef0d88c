import Foundation
import Testing
import RoostTestSupport
@testable import RoostXMPP

/// The engine against the real Prosody started by contrib/scripts/prosody-test-server.
@Suite("End to end: engine against Prosody", .enabled(if: TestServer.isAvailable))
struct EndToEndEngineTests {
    let server: TestServer

    init() throws { server = try TestServer.require() }

    private func register() async throws -> (JID, String) {
        let (client, jid, password) = try await server.registeredClient()
        await client.disconnect()
        return (jid, password)
    }

    @Test func loginWithEachOfferedMechanism() async throws {
        let (jid, password) = try await register()
        var mechanisms: [String] = []
        for mechanism in ["SCRAM-SHA-1-PLUS", "SCRAM-SHA-256-PLUS", "SCRAM-SHA-1", "SCRAM-SHA-256", "PLAIN"] {
            var config = server.configuration(for: jid, password: password)
            config.saslMechanisms = [mechanism]
            let client = XMPPClient(configuration: config)
            let outcome: Result<SessionInfo, ClientError>
            do { outcome = .success(try await client.connect()) } catch { outcome = .failure(error) }
            switch outcome {
            case .success(let info):
                #expect(info.mechanism == mechanism)
                #expect(info.boundJID.bare == jid)
                mechanisms.append(mechanism)
                await client.disconnect()
            case .failure(let error):
                // Not offered by this server (or no usable channel binding): nothing to test for it.
                let notOffered = if case .sasl(.noAcceptableMechanism) = error { true } else { false }
                #expect(notOffered, "\(mechanism): \(error)")
            }
        }
        #expect(mechanisms.contains("SCRAM-SHA-1"))
        #expect(mechanisms.contains("PLAIN"))
        print("mechanisms that logged in: \(mechanisms)")
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
        guard server.directTLSPort != nil else { return }
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
        // wronghost.test is served by the test Prosody with roost.test's certificate.
        let config = server.configuration(for: try JID("someone@wronghost.test"), password: "x")
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
        _ = try await client.request(Registration.changePasswordRequest(account: jid, newPassword: "new-\(password)"))
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

    @Test func messageRoundTripWithChatStates() async throws {
        let (alice, _, _) = try await server.registeredClient("alice")
        let (bob, _, _) = try await server.registeredClient("bob")
        let bobEvents = EventCollector(bob)
        // Roost's resources have priority -1, so a message to the bare JID would go to offline storage
        // (RFC 6121 §8.5.2.1.1); address the bound resource.
        let bobJID = try #require(bob.boundJID)
        var composing = Message(to: bobJID, type: .chat, body: nil)
        composing.setChatState(.composing)
        try alice.send(composing)
        let text = "héllo 你好 👋 <b>&amp;</b>"
        var message = Message(to: bobJID, type: .chat, body: text)
        message.setChatState(.active)
        message.setThread("thread-1")
        try alice.send(message)
        let received = try await bobEvents.waitForStanza { Message($0).body != nil }
        let m = Message(received)
        #expect(m.body == text)
        #expect(m.chatState == .active)
        #expect(m.thread == "thread-1")
        #expect(m.from?.bare == alice.boundJID?.bare)
        let state = try await bobEvents.waitForStanza { Message($0).chatState == .composing }
        #expect(Message(state).body == nil)
        // Prosody stamps messages with a stanza-id from the account's archive (XEP-0359 + MAM).
        #expect(m.stanzaIDs.id(by: bobJID.bare) != nil)
        await alice.disconnect()
        await bob.disconnect()
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

    @Test func discoOfServerAndOwnAccount() async throws {
        let (client, jid, _) = try await server.registeredClient()
        let serverInfo = try await client.request(Disco.infoRequest(to: try JID(server.domain)))
        let info = try #require(Disco.info(in: serverInfo))
        #expect(info.supports(Namespace.carbons))
        let own = try await client.request(Disco.infoRequest(to: jid))
        #expect(Disco.info(in: own)?.supports(Namespace.mam) == true)
        _ = try await client.request(Carbons.enableRequest())
        await client.disconnect()
    }

    @Test func iqPingRoundTripAndUnknownRequestGetsAnError() async throws {
        let (client, _, _) = try await server.registeredClient()
        let domain = try JID(server.domain)
        _ = try await client.request(Ping.request(to: domain))
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
