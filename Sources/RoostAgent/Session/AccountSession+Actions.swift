import Foundation
import RoostXMPP
import RoostArchive

/// What the agent asks of an account to run an action (the control socket's requests, a notification's buttons):
/// the settings of the moment (a SIGHUP may have changed them) and who watches its progress.
public struct ActionRequest: Sendable {
    var priority: Int
    var omemoSend: OMEMOSendSetting
    var dataDirectory: String
    var progress: (@Sendable (TransferProgress) -> Void)?
    var onAccountRemoved: (@Sendable () async -> Void)?
}

/// Actions go through the account's session: it lends them its online client, its OMEMO device and rooms, and what
/// they record is committed through it (`record`), which handles the outcome (the downloads the records add) on
/// its side, as it does for what it archives itself.
extension AccountSession {
    /// Runs `work` with the session's client while the account is online; nil when it is not.
    func perform(_ request: ActionRequest, _ work: @escaping @Sendable (ActionContext) async -> Data) async -> Data? {
        guard let client = onlineClient() else { return nil }
        var context = actionContext(client: client, dataDirectory: request.dataDirectory, priority: request.priority)
        context.omemoSend = request.omemoSend
        context.progress = request.progress
        context.onAccountRemoved = request.onAccountRemoved
        return await work(context)
    }

    /// The context of an action run for the session (by the agent, or by the session itself: a contact's vCard).
    func actionContext(client: XMPPClient, dataDirectory: String, priority: Int) -> ActionContext {
        var context = ActionContext(client: client, account: jid, archive: actionArchive, dataDirectory: dataDirectory, priority: priority)
        context.omemo = omemo
        context.rooms = rooms
        context.archivePath = settings.archivePath
        return context
    }

    /// What the account's actions record, committed through the session.
    nonisolated var actionArchive: ActionArchive {
        ActionArchive { [weak self] events throws(ActionFailure) in
            guard let self else { throw ActionFailure(.internalError, "the account has stopped") }
            try await self.record(events)
        }
    }

    /// Commits an action's records and queues the downloads they add.
    func record(_ events: [ArchiveEvent]) async throws(ActionFailure) {
        try await ActionArchive.commit(events, to: writer, downloads: downloads)
    }
}
