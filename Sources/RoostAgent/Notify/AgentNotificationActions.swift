import RoostCore
import Foundation
import RoostArchive
import RoostNotify
import RoostXMPP

/// Does what the user pressed on a notification, through the running account's connection: answers a friend
/// request (archived like one given with `roost requests`) or an invitation, marks a conversation read (as `roost read
/// --send`) or sends a reply (as `roost send`).
struct AgentNotificationActions: NotificationActions {
    let handle: any AgentHandle
    let dataDirectory: String
    let log: Logger
    /// Runs a reply or a displayed marker as the control socket runs `roost send` and `roost read --send`.
    let dispatcher: ControlDispatcher
    /// Where the conversation's notification is closed once it was read or answered (`NotificationHub.post`).
    let post: @Sendable (NotificationEvent) -> Void

    func markRead(account: String, conversation: String) async {
        // As `roost read --send`: read in the archive first, then a displayed marker for the newest incoming message,
        // which the contact and, through carbons, the user's other clients get.
        do throws(ActionFailure) {
            try await handle.archive(for: account).record([.conversationRead(account: account, conversation: conversation, timestamp: Timestamp.now())])
        } catch {
            log.warning("\(account): marking \(LogText.quote(conversation)) read failed: \(LogText.quote(error))")
            return
        }
        post(.conversationRead(account: account, conversation: conversation))
        guard let marker = MarkReadAction.newest(account: account, conversation: conversation, archivePath: handle.archivePath) else {
            log.info("\(account): marked \(LogText.quote(conversation)) read (from the notification)")
            return
        }
        switch await dispatcher.perform(marker, account: account) {
        case .success(let done): log.info("\(account): \(LogText.quote(done.message)) (from the notification)")
        case .failure(let failure):
            log.warning("\(account): marked \(LogText.quote(conversation)) read in the archive, but the displayed marker was not sent: \(LogText.quote(failure))")
        }
    }

    func pushActionToken(_ action: String, account: String, target: String) -> String? {
        guard let action = PushActionTokens.Action(rawValue: action) else { return nil }
        return PushActionTokens(directory: dataDirectory).sign(action, account: account, target: target)
    }

    func reply(account: String, conversation: String, text: String) async {
        switch await dispatcher.perform(SendMessageAction(to: conversation, body: text), account: account) {
        case .success(let sent):
            log.info("\(account): replied to \(LogText.quote(sent.to)) (from the notification\(sent.queued == true ? "; queued until the account is online" : ""))")
            post(.conversationRead(account: account, conversation: conversation))
        case .failure(let failure):
            log.warning("\(account): the reply to \(LogText.quote(conversation)) from the notification was not sent: \(LogText.quote(failure))")
        }
    }

    func answerSubscription(account: String, jid: String, accept: Bool) async {
        switch await dispatcher.perform(SubscriptionAnswerAction(jid: jid, accept: accept), account: account) {
        case .success(let done): log.info("\(account): \(LogText.quote(done.message)) (from the notification)")
        case .failure(let failure):
            log.warning("\(account): answering \(LogText.quote(jid))'s friend request failed: \(LogText.quote(failure)); use `roost requests`")
        }
    }

    func answerInvitation(account: String, room: String, join: Bool) async {
        let failure: ActionFailure
        if join {
            switch await dispatcher.perform(RoomJoinAction(room: room), account: account) {
            case .success(let joined):
                log.info("\(account): joined \(LogText.quote(joined.room)) as \(LogText.quote(joined.nick)) (from the notification)")
                return
            case .failure(let failed): failure = failed
            }
        } else {
            switch await dispatcher.perform(InvitationDeclineAction(room: room), account: account) {
            case .success(let declined):
                log.info("\(account): \(LogText.quote(declined.message)) (from the notification)")
                return
            case .failure(let failed): failure = failed
            }
        }
        log.warning("\(account): answering the invitation to \(LogText.quote(room)) failed: \(LogText.quote(failure)); "
                    + "use `roost rooms join` or `roost rooms decline`")
    }
}
