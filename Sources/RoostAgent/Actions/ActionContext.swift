public import RoostXMPP

/// What an action needs: a logged-in client for the account, the archive, and where files go.
public struct ActionContext: Sendable {
    public let client: XMPPClient
    /// The account's bare JID.
    public let account: JID
    public let archive: ActionArchive
    /// The folder holding the archive; avatars go to `avatars/` inside it.
    public let dataDirectory: String
    /// The account's presence priority, repeated in presence updates (a vCard photo change).
    public let priority: Int
    /// Roost's OMEMO device for the account (nil with `omemo = off`) and when `roost send` encrypts.
    var omemo: OMEMOService? = nil
    var omemoSend: OMEMOSendSetting = .auto
    var archivePath: String? = nil
    /// Whether the archive holds every friend request that reached the account: true in the agent, which
    /// archives each; false for a one-shot login, which sends no presence and so is never handed the requests
    /// the server stored while nothing ran.
    var archiveHasEveryRequest = true
    /// Called once the account was deleted on the server (the agent stops the account; nil elsewhere).
    var onAccountRemoved: (@Sendable () async -> Void)? = nil
    /// Told how a long transfer (a file upload) advances, when someone watches (a progress bar).
    public var progress: (@Sendable (TransferProgress) -> Void)?
    /// The agent's group chats for the account (nil outside the agent).
    var rooms: RoomManager? = nil

    public init(client: XMPPClient, account: JID, archive: ActionArchive, dataDirectory: String, priority: Int) {
        self.client = client
        self.account = account.bare
        self.archive = archive
        self.dataDirectory = dataDirectory
        self.priority = priority
    }

    func accountRemoved() async { await onAccountRemoved?() }

    /// Sends an IQ and waits for the answer, turning engine errors into action failures.
    func request(_ iq: IQ, doing what: String) async throws(ActionFailure) -> IQ {
        do {
            return try await client.request(iq)
        } catch {
            throw ActionFailure.from(error, doing: what)
        }
    }

    func send(_ stanza: some Stanza, doing what: String) throws(ActionFailure) {
        do { try client.send(stanza) } catch { throw ActionFailure.from(error, doing: what) }
    }
}

extension ActionFailure {
    static func from(_ error: ClientError, doing what: String) -> ActionFailure {
        switch error {
        case .stanzaError(let e):
            let kind: Kind = e.condition == "item-not-found" || e.condition == "recipient-unavailable" ? .notFound : .refused
            return ActionFailure(kind, "\(what): the server refused: \(e)")
        case .notConnected, .disconnected, .timeout, .transport, .tls, .tlsNotOffered, .authenticationFailed, .sasl,
             .streamError, .seeOtherHost, .bindFailed:
            return ActionFailure(.connection, "\(what): \(error)")
        case .registrationFailed:
            return ActionFailure(.refused, "\(what): \(error)")
        case .outboundQueueFull:
            return ActionFailure(.connection, "\(what): \(error)")
        case .stanzaTooLarge:
            return ActionFailure(.tooLarge, "\(what): \(error)")
        case .xml, .protocolViolation:
            return ActionFailure(.internalError, "\(what): \(error)")
        }
    }
}
