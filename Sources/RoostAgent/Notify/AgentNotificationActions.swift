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
            log.warning("\(account): cannot answer \(jid)'s friend request now: the account is not online; use `roost requests`")
            return
        }
        let context = ActionContext(client: client, account: client.configuration.jid, archive: ActionArchive(pipeline: handle.pipeline),
                                    dataDirectory: dataDirectory, priority: client.configuration.priority)
        do {
            let done = try await SubscriptionAnswerAction(jid: jid, accept: accept).perform(in: context)
            log.info("\(account): \(done.message) (from the notification)")
        } catch {
            log.warning("\(account): answering \(jid)'s friend request failed: \(error)")
        }
    }
}
