/// What a notification's buttons need when pressed; handed to libnotify as callback data and released by it.
final class DesktopActionContext {
    /// What the buttons answer.
    enum Target {
        /// A contact request: Accept/Deny.
        case request
        /// An invitation: Join/Decline.
        case invitation
        /// A message (a group chat mention too): Reply and Mark read; the notification as shown, for `reply_command`.
        case message(OutgoingNotification)
    }

    let account: String
    let jid: String
    let key: String
    let actions: any NotificationActions
    let target: Target
    weak var state: DesktopState?

    init(account: String, jid: String, key: String, actions: any NotificationActions, target: Target, state: DesktopState) {
        self.account = account
        self.jid = jid
        self.key = key
        self.actions = actions
        self.target = target
        self.state = state
    }
}
