import RoostCore
import Foundation
internal import CNotify

/// The desktop sink's state: live notifications by replacement key, and what is known about the
/// notification server. Touched only on `DesktopSink.thread`, hence unchecked.
final class DesktopState: @unchecked Sendable {
    static let serviceName = "org.freedesktop.Notifications"
    private static let busTimeoutMilliseconds: Int32 = 2000

    private let sinkName: String
    private let actions: (any NotificationActions)?
    private let replyCommand: [String]?
    private let log: @Sendable (LogLevel, String) -> Void
    private let serverRetrySeconds: Int
    private var notifications: [String: DesktopNotificationHandle] = [:]
    private var bus: SessionBusConnection?
    private var initialized = false
    /// Set while no server is known to exist: the time of the last check. Checks repeat after
    /// `serverRetrySeconds`; the warning is logged when the server first goes missing only.
    private var missingCheckedAt: Date?
    private var missingError: NotifyError?
    /// The subscription to the server's NotificationReplied signal (inline replies), made at the first notification
    /// offering one; 0 before.
    private var repliesSubscription: UInt32 = 0
    /// How long `reply_command` may take (the user types the reply into it).
    static let replyCommandSeconds = 600

    init(sinkName: String, actions: (any NotificationActions)?, replyCommand: [String]?, log: @escaping @Sendable (LogLevel, String) -> Void,
         serverRetrySeconds: Int) {
        self.sinkName = sinkName
        self.actions = actions
        self.replyCommand = replyCommand
        self.log = log
        self.serverRetrySeconds = serverRetrySeconds
    }

    func show(_ notification: OutgoingNotification) -> Result<Void, NotifyError> {
        let key = notification.replacementKey
        if notification.kind == .close {
            if let handle = notifications.removeValue(forKey: key) {
                notify_notification_close(handle.pointer, nil)
            }
            return .success(())
        }
        if let error = serverProblem() { return .failure(error) }
        let caps = Self.serverCapabilities()
        let handle = notifications[key] ?? DesktopNotificationHandle(summary: notification.title)
        let answerable = notification.kind == .request || notification.kind == .invitation
        var text = caps.contains("actions") || !answerable ? notification.text : notification.fullText
        if !caps.contains("body") { text = "" } else if caps.contains("body-markup") { text = MarkupText.escape(text) }
        notify_notification_update(handle.pointer, notification.title, text, notification.avatarPath)
        // The picture a message shared; cleared again when a later message of the conversation has none.
        notify_notification_set_hint(handle.pointer, "image-path", notification.imagePath.map { g_variant_new_string($0) })
        notify_notification_set_app_name(handle.pointer, "Roost")
        notify_notification_set_category(handle.pointer, Self.category(notification.kind))
        notify_notification_clear_actions(handle.pointer)
        handle.replyTarget = nil
        // A watch's priority: low, normal (high too), critical for urgent.
        if let priority = notification.priority {
            notify_notification_set_urgency(handle.pointer, priority == .urgent ? NOTIFY_URGENCY_CRITICAL : priority == .low ? NOTIFY_URGENCY_LOW : NOTIFY_URGENCY_NORMAL)
        }
        // Stays until dismissed: it is said once, and the account archives nothing until the user acts.
        if answerable || notification.kind == .account {
            notify_notification_set_timeout(handle.pointer, 0)
        }
        if answerable {
            if caps.contains("actions"), let actions, let jid = notification.conversation {
                addActions(handle, [("accept", notification.kind == .invitation ? "Join" : "Accept"),
                                    ("deny", notification.kind == .invitation ? "Decline" : "Deny")],
                           DesktopActionContext(account: notification.account, jid: jid, key: key, actions: actions,
                                                target: notification.kind == .invitation ? .invitation : .request, state: self))
            }
        }
        if notification.kind == .message, caps.contains("actions"), let actions, let conversation = notification.conversation {
            addMessageActions(handle, notification, conversation: conversation, key: key, actions: actions, inlineReply: caps.contains("inline-reply"))
        }
        var error: UnsafeMutablePointer<GError>?
        if notify_notification_show(handle.pointer, &error) == 0 {
            let message = error.map { String(cString: $0.pointee.message) } ?? "unknown error"
            if let error { g_error_free(error) }
            notifications[key] = nil
            return .failure(.desktop(message))
        }
        if notification.kind != .test { notifications[key] = handle }
        return .success(())
    }

    func forgetAll() {
        notifications.removeAll()
        if repliesSubscription != 0, let bus {
            bus.unsubscribe(repliesSubscription)
            repliesSubscription = 0
        }
    }

    fileprivate func actionInvoked(_ context: DesktopActionContext, action: String) {
        let actions = context.actions
        let account = context.account
        let jid = context.jid
        let accept = action == "accept"
        switch context.target {
        case .invitation:
            notifications[context.key] = nil
            log(.info, "\(account): \(accept ? "joining" : "declining the invitation to") \(LogText.quote(jid)) from the desktop notification")
            Task { await actions.answerInvitation(account: account, room: jid, join: accept) }
        case .request:
            notifications[context.key] = nil
            log(.info, "\(account): \(accept ? "accepting" : "denying") the subscription request of \(LogText.quote(jid)) from the desktop notification")
            Task { await actions.answerSubscription(account: account, jid: jid, accept: accept) }
        case .message(let notification):
            // The notification stays until the agent has acted: it closes it through the notifier (a conversation read
            // or answered), which also starts its count again.
            switch action {
            case "mark-read":
                log(.info, "\(account): marking \(LogText.quote(jid)) read from the desktop notification")
                Task { await actions.markRead(account: account, conversation: jid) }
            case "reply":
                guard let replyCommand else { return }
                log(.info, "\(account): asking reply_command for a reply to \(LogText.quote(jid))")
                let log = self.log
                Task {
                    guard let text = await Self.replyText(replyCommand, for: notification, log: log) else { return }
                    await actions.reply(account: account, conversation: jid, text: text)
                }
            default:
                // `inline-reply` comes as NotificationReplied, with the text (`repliedSignal`).
                break
            }
        }
    }

    /// An inline reply typed into notification `id` (the server's NotificationReplied signal).
    fileprivate func replied(id: UInt32, text: String) {
        guard let target = notifications.values.first(where: { $0.replyTarget != nil && $0.serverID == id })?.replyTarget else {
            log(.debug, "desktop sink \(sinkName): an inline reply to notification \(id), which is not one of Roost's open message notifications")
            return
        }
        guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { return }
        let actions = target.actions
        let account = target.account
        let conversation = target.jid
        log(.info, "\(account): replying to \(LogText.quote(conversation)) from the desktop notification")
        Task { await actions.reply(account: account, conversation: conversation, text: text) }
    }

    /// What `reply_command` printed (its last line end removed), run with the notification in `ROOST_*` variables and
    /// as JSON on stdin like a command sink; nil when it failed, was cancelled (a status other than 0) or printed nothing.
    static func replyText(_ argv: [String], for notification: OutgoingNotification, log: @Sendable (LogLevel, String) -> Void) async -> String? {
        let program = LogText.quote(argv.first ?? "")
        let outcome = await ProcessRunner.run(argv: argv, extraEnvironment: NotificationPayload.environment(notification),
                                              input: .data(NotificationPayload.json(notification)), output: .capture(limit: 256 * 1024),
                                              timeout: .seconds(replyCommandSeconds))
        if let failure = outcome.launchFailure {
            log(.warning, "reply_command \(program) could not be started: \(LogText.quote(failure))")
            return nil
        }
        if outcome.timedOut {
            log(.warning, "reply_command \(program) did not finish within \(replyCommandSeconds) s and was stopped; nothing was sent")
            return nil
        }
        guard outcome.status == 0 else {
            log(.info, "reply_command \(program) exited with status \(outcome.status) (cancelled); nothing was sent")
            return nil
        }
        var text = String(decoding: outcome.output, as: UTF8.self)
        if text.hasSuffix("\n") { text.removeLast() }
        guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            log(.info, "reply_command \(program) printed nothing; nothing was sent")
            return nil
        }
        return text
    }

    // MARK: Server

    /// nil when a server is there (or can be started by the bus); the error otherwise, logged once per outage.
    private func serverProblem() -> NotifyError? {
        if let checked = missingCheckedAt, Date().timeIntervalSince(checked) < Double(serverRetrySeconds) {
            return missingError
        }
        let problem: NotifyError?
        if let missing = Self.missingLibrary() {
            problem = .library(missing)
        } else {
            if bus == nil { bus = SessionBusConnection.open() }
            if let bus {
                do {
                    var present = try bus.hasOwner(Self.serviceName, timeoutMilliseconds: Self.busTimeoutMilliseconds)
                    if !present { present = try bus.isActivatable(Self.serviceName, timeoutMilliseconds: Self.busTimeoutMilliseconds) }
                    problem = present ? nil : .noNotificationServer("nothing owns \(Self.serviceName)")
                } catch {
                    problem = .noNotificationServer(error.description)
                }
            } else {
                problem = .noSessionBus
            }
        }
        if let problem {
            if missingCheckedAt == nil {
                log(.warning, "desktop sink \(sinkName): \(LogText.quote(problem)); desktop notifications are skipped and the server is looked for again every \(serverRetrySeconds) s")
            }
            missingCheckedAt = Date()
            missingError = problem
            return problem
        }
        if missingCheckedAt != nil {
            log(.info, "desktop sink \(sinkName): a notification server is available again")
            missingCheckedAt = nil
            missingError = nil
        }
        if !initialized {
            initialized = notify_init("Roost") != 0
        }
        return nil
    }

    /// libnotify is opened on first use (CNotify); nil when it is there.
    private static func missingLibrary() -> LibraryLoadError? {
        do throws(LibraryLoadError) {
            try LibraryLoadError.check("libnotify.so.4", roost_notify_load())
            return nil
        } catch {
            return error
        }
    }

    private static func serverCapabilities() -> Set<String> {
        var caps: Set<String> = []
        let list = notify_get_server_caps()
        var node = list
        while let current = node {
            if let data = current.pointee.data {
                caps.insert(String(cString: data.assumingMemoryBound(to: CChar.self)))
            }
            node = current.pointee.next
        }
        g_list_free_full(list, g_free)
        return caps
    }

    private static func category(_ kind: OutgoingNotification.Kind) -> String {
        switch kind {
        case .message, .summary: "im.received"
        case .request: "presence"
        case .invitation: "im"
        case .account: "network.error"
        case .test, .close: "im"
        }
    }

    // MARK: Actions

    /// Reply (inline where the server can, else through `reply_command` when set) and Mark read on a message.
    private func addMessageActions(_ handle: DesktopNotificationHandle, _ notification: OutgoingNotification, conversation: String, key: String,
                                   actions: any NotificationActions, inlineReply: Bool) {
        let context = DesktopActionContext(account: notification.account, jid: conversation, key: key, actions: actions,
                                           target: .message(notification), state: self)
        var buttons: [(String, String)] = []
        if inlineReply, subscribeToReplies() {
            buttons.append(("inline-reply", "Reply"))
            handle.replyTarget = context
        } else if replyCommand != nil {
            buttons.append(("reply", "Reply"))
        }
        buttons.append(("mark-read", "Mark read"))
        addActions(handle, buttons, context)
    }

    /// Accept/Deny on a contact request, Join/Decline on an invitation (action ids `accept` and `deny` for both);
    /// `reply`/`inline-reply` and `mark-read` on a message.
    private func addActions(_ handle: DesktopNotificationHandle, _ buttons: [(id: String, label: String)], _ context: DesktopActionContext) {
        for (id, label) in buttons {
            notify_notification_add_action(handle.pointer, id, label, { _, action, data in
                guard let data, let action else { return }
                let context = Unmanaged<DesktopActionContext>.fromOpaque(data).takeUnretainedValue()
                context.state?.actionInvoked(context, action: String(cString: action))
            }, Unmanaged.passRetained(context).toOpaque(), { data in
                guard let data else { return }
                Unmanaged<DesktopActionContext>.fromOpaque(data).release()
            })
        }
    }

    /// Listens for the server's NotificationReplied (the inline replies of KDE, and others that advertise
    /// `inline-reply`) on this thread's main context; false when the bus cannot be used.
    private func subscribeToReplies() -> Bool {
        if repliesSubscription != 0 { return true }
        guard let bus else { return false }
        repliesSubscription = bus.subscribe(sender: Self.serviceName, interface: Self.serviceName, member: "NotificationReplied",
                                            path: "/org/freedesktop/Notifications") { [weak self] parameters in
            guard parameters.count == 2, case let .number(id)? = parameters[0], case let .string(text)? = parameters[1] else { return }
            self?.replied(id: UInt32(truncatingIfNeeded: id), text: text)
        }
        return repliesSubscription != 0
    }
}
