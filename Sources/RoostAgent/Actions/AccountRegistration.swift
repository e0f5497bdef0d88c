import Foundation
public import RoostXMPP

/// `roost register`: creates an account in-band (XEP-0077) and, like the seed app, gives it its first vCard.
/// Always a login of its own: the new account is not one the agent serves yet.
public enum AccountRegistration {
    public struct Settings: Sendable {
        public var jid: JID
        public var password: String
        public var host: String?
        public var port: UInt16?
        public var directTLS: Bool
        public var caFile: String?
        public var fingerprint: String?

        public init(jid: JID, password: String, host: String?, port: UInt16?, directTLS: Bool, caFile: String?, fingerprint: String?) {
            self.jid = jid
            self.password = password
            self.host = host
            self.port = port
            self.directTLS = directTLS
            self.caFile = caFile
            self.fingerprint = fingerprint
        }
    }

    /// Registers, optionally publishes the first vCard, logs out. Returns the vCard result when one was published.
    public static func register(_ settings: Settings, firstVCard: VCardPublishAction?, dataDirectory: String) async throws(ActionFailure) -> VCardPublishAction.Published? {
        var configuration = ClientConfiguration(jid: settings.jid, password: settings.password, host: settings.host, port: settings.port,
                                                tlsMode: settings.directTLS ? .direct : .starttls, caFile: settings.caFile,
                                                pinnedSHA256: settings.fingerprint,
                                                resource: "roost-register-\(UUID().uuidString.prefix(6).lowercased())")
        configuration.sendsInitialPresence = false
        configuration.streamManagement = false
        let client = XMPPClient(configuration: configuration)
        do { _ = try await client.registerAccount() } catch {
            let kind: ActionFailure.Kind = if case .registrationFailed = error { .refused } else { .connection }
            throw ActionFailure(kind, "could not register \(settings.jid): \(error)")
        }
        guard let firstVCard else {
            await client.disconnect()
            return nil
        }
        let context = ActionContext(client: client, account: settings.jid, archive: .none, dataDirectory: dataDirectory,
                                    priority: -1)
        let published: VCardPublishAction.Published
        do { published = try await firstVCard.perform(in: context) } catch {
            await client.disconnect()
            throw ActionFailure(error.kind, "registered \(settings.jid), but its vCard was not published: \(error.message)")
        }
        await client.disconnect()
        return published
    }
}
