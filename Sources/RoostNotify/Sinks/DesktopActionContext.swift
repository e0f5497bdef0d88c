/// What an Accept/Deny button needs when pressed; handed to libnotify as callback data and released by it.
final class DesktopActionContext {
    let account: String
    let jid: String
    let key: String
    let actions: any NotificationActions
    /// The buttons answer an invitation (Join/Decline) rather than a contact request.
    var invitation = false
    weak var state: DesktopState?

    init(account: String, jid: String, key: String, actions: any NotificationActions, state: DesktopState) {
        self.account = account
        self.jid = jid
        self.key = key
        self.actions = actions
        self.state = state
    }
}
