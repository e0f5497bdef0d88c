import RoostCore
import Foundation
import RoostNotify
import RoostXMPP

/// Answers a friend request when the user presses Accept or Deny on its notification, through the running
/// account's connection; the answer is archived like one given with `roost requests`.
struct AgentNotificationActions: NotificationActions {
    let handle: any AgentHandle
    let dataDirectory: String
    let log: Logger

    func answerSubscription(account: String, jid: String, accept: Bool) async {
        guard let client = await handle.client(for: account) else {
            log.warning("\(account): cannot answer \(LogText.quote(jid))'s friend request now: the account is not online; use `roost requests`")
            return
        }
        var context = ActionContext(client: client, account: client.configuration.jid, archive: ActionArchive(writer: handle.writer, downloads: handle.files),
                                    dataDirectory: dataDirectory, priority: client.configuration.priority)
        context.archivePath = handle.archivePath
        do {
            let done = try await SubscriptionAnswerAction(jid: jid, accept: accept).perform(in: context)
            log.info("\(account): \(LogText.quote(done.message)) (from the notification)")
        } catch {
            log.warning("\(account): answering \(LogText.quote(jid))'s friend request failed: \(LogText.quote(error))")
        }
    }

    func answerInvitation(account: String, room: String, join: Bool) async {
        guard let client = await handle.client(for: account), let rooms = (handle as? Agent)?.rooms(for: account) else {
            log.warning("\(account): cannot answer the invitation to \(LogText.quote(room)) now: the account is not online; use `roost rooms join` or `roost rooms decline`")
            return
        }
        var context = ActionContext(client: client, account: client.configuration.jid, archive: ActionArchive(writer: handle.writer, downloads: handle.files),
                                    dataDirectory: dataDirectory, priority: client.configuration.priority)
        context.rooms = rooms
        context.archivePath = handle.archivePath
        do {
            if join {
                let joined = try await RoomJoinAction(room: room).perform(in: context)
                log.info("\(account): joined \(LogText.quote(joined.room)) as \(LogText.quote(joined.nick)) (from the notification)")
            } else {
                let declined = try await InvitationDeclineAction(room: room).perform(in: context)
                log.info("\(account): \(LogText.quote(declined.message)) (from the notification)")
            }
        } catch {
            log.warning("\(account): answering the invitation to \(LogText.quote(room)) failed: \(LogText.quote(error))")
        }
    }
}
