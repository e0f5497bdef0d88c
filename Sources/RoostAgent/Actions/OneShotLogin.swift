public import RoostCore
import Foundation
import RoostArchive
public import RoostXMPP

/// Runs an action when no agent is running: logs the account in once (priority from the config, normally -1,
/// without initial presence so contacts do not see it come and go), acts, archives, and logs out.
///
/// It binds its own resource (`<resource>-cli-XXXX`), so it never replaces a running agent's session.
public enum OneShotLogin {
    /// Logs in on a resource of its own (`<resource>-TAG-XXXX`): no initial presence, no stream management.
    static func quietLogin(account: AccountConfig, config: RoostConfig, resourceTag: String, log: Logger) async throws(ActionFailure) -> XMPPClient {
        try await quietSession(account: account, config: config, resourceTag: resourceTag, log: log).client
    }

    /// `quietLogin`, with what the login established (TLS version, certificate check, SASL mechanism).
    static func quietSession(account: AccountConfig, config: RoostConfig, resourceTag: String,
                             log: Logger) async throws(ActionFailure) -> (client: XMPPClient, info: SessionInfo) {
        let password: String
        do { password = try await account.resolvePassword() } catch {
            throw ActionFailure(error.isResourceShortage ? .internalError : .config, error.description)
        }
        var configuration: ClientConfiguration
        do { configuration = try ClientConfiguration(account: account, password: password, maxStanzaBytes: config.maxStanzaBytes) } catch {
            throw ActionFailure(.config, error.description)
        }
        configuration.resource = "\(account.resource)-\(resourceTag)-\(UUID().uuidString.prefix(6).lowercased())"
        configuration.sendsInitialPresence = false
        configuration.streamManagement = false
        // -v shows what the login does, -vv also the XML exchange (secrets redacted, see XMLTrace).
        if log.enabled(.debug) { configuration.trace = { line in log.debug("\(account.jid): \(line)") } }
        let client = XMPPClient(configuration: configuration) { level, message in
            switch level {
            case .error, .warning, .info: log.info(message)
            case .debug: log.debug(message)
            }
        }
        let info: SessionInfo
        do { info = try await client.connect() } catch {
            var failure = ActionFailure(.connection, "could not log in as \(account.jid): \(error)")
            if case let .tls(tls) = error { failure.refusedCertificate = tls.refusedFingerprint }
            throw failure
        }
        return (client, info)
    }

    /// Logs in once and out again: proves the account's password (or password_command), server and
    /// certificate work (`roost config init`, `roost config --check`). Changes nothing on the server and writes
    /// no archive. Returns what the login established.
    @discardableResult
    public static func testLogin(account: AccountConfig, config: RoostConfig, log: Logger) async throws(ActionFailure) -> SessionInfo {
        let (client, info) = try await quietSession(account: account, config: config, resourceTag: "check", log: log)
        await client.disconnect()
        return info
    }

    public static func perform<Action: AccountAction>(_ action: Action, account: AccountConfig, config: RoostConfig, log: Logger,
                                                      progress: (@Sendable (TransferProgress) -> Void)? = nil) async throws(ActionFailure) -> Action.Result {
        let client = try await quietLogin(account: account, config: config, resourceTag: "cli", log: log)
        let configuration = client.configuration
        let events = Task { await answerRosterPushes(client) }
        defer { events.cancel() }

        let writer: ArchiveWriter
        do { writer = try ArchiveWriter(path: config.archivePath, durability: .full, log: log) } catch {
            await client.disconnect()
            throw ActionFailure(.internalError, "could not open the archive \(config.archivePath): \(error)")
        }
        let dataDirectory = (config.archivePath as NSString).deletingLastPathComponent
        var context = ActionContext(client: client, account: configuration.jid, archive: ActionArchive(writer: writer),
                                    dataDirectory: dataDirectory, priority: configuration.priority)
        context.archivePath = config.archivePath
        context.archiveHasEveryRequest = false
        context.progress = progress
        context.omemoSend = account.omemoSend
        if account.omemo {
            do {
                context.omemo = try OMEMOService(account: configuration.jid, dataDirectory: dataDirectory, archivePath: config.archivePath, log: log)
            } catch {
                log.warning("\(account.jid): OMEMO is unavailable: \(LogText.quote(error))")
            }
        }
        let result: Result<Action.Result, ActionFailure>
        do { result = .success(try await action.perform(in: context)) } catch { result = .failure(error) }
        await writer.drainAndStop()
        await confirmHandled(client, log: log)
        await client.disconnect()
        return try result.get()
    }

    /// What an action sends without an answer (a presence, a message) counts once the server has handled it, and
    /// the logout's wait for the server's `</stream:stream>` is short: on a loaded server a socket closed after it
    /// can reset the connection before the server read those stanzas (a lost pre-approval was seen so). The server
    /// handles a stream's stanzas in order, so the answer to a ping sent last — a result or an error — proves the
    /// ones before it were handled.
    static func confirmHandled(_ client: XMPPClient, log: Logger) async {
        do {
            _ = try await client.request(Ping.request(to: JID(parsing: client.configuration.jid.domain)), timeout: .seconds(60))
        } catch {
            if case .stanzaError = error { return }
            log.warning("\(client.configuration.jid): the server did not confirm it handled what was sent: \(LogText.quote(error))")
        }
    }

    /// Once the roster was fetched the server pushes changes to this resource too; RFC 6121 §2.1.6 wants each
    /// push answered. Everything else is left to the agent (it reads the server archive later).
    static func answerRosterPushes(_ client: XMPPClient) async {
        for await event in client.events {
            guard case .stanza(let stanza) = event else { continue }
            if case .iq(let iq) = stanza.kind, Roster.isLegitimatePush(iq, account: client.configuration.jid) {
                try? client.send(iq.result())
            }
        }
    }
}
