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
    private let log: @Sendable (LogLevel, String) -> Void
    private let serverRetrySeconds: Int
    private var notifications: [String: DesktopNotificationHandle] = [:]
    private var bus: SessionBusConnection?
    private var initialized = false
    /// Set while no server is known to exist: the time of the last check. Checks repeat after
    /// `serverRetrySeconds`; the warning is logged when the server first goes missing only.
    private var missingCheckedAt: Date?
    private var missingError: NotifyError?

    init(sinkName: String, actions: (any NotificationActions)?, log: @escaping @Sendable (LogLevel, String) -> Void, serverRetrySeconds: Int) {
        self.sinkName = sinkName
        self.actions = actions
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
                addAnswerActions(handle, account: notification.account, jid: jid, key: key, actions: actions,
                                 invitation: notification.kind == .invitation)
            }
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
    }

    fileprivate func actionInvoked(_ context: DesktopActionContext, accept: Bool) {
        notifications[context.key] = nil
        let actions = context.actions
        let account = context.account
        let jid = context.jid
        if context.invitation {
            log(.info, "\(account): \(accept ? "joining" : "declining the invitation to") \(LogText.quote(jid)) from the desktop notification")
            Task { await actions.answerInvitation(account: account, room: jid, join: accept) }
        } else {
            log(.info, "\(account): \(accept ? "accepting" : "denying") the subscription request of \(LogText.quote(jid)) from the desktop notification")
            Task { await actions.answerSubscription(account: account, jid: jid, accept: accept) }
        }
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

    /// Accept/Deny on a contact request, Join/Decline on an invitation (action ids `accept` and `deny` for both).
    private func addAnswerActions(_ handle: DesktopNotificationHandle, account: String, jid: String, key: String, actions: any NotificationActions,
                                  invitation: Bool) {
        for (id, label) in invitation ? [("accept", "Join"), ("deny", "Decline")] : [("accept", "Accept"), ("deny", "Deny")] {
            let context = DesktopActionContext(account: account, jid: jid, key: key, actions: actions, state: self)
            context.invitation = invitation
            notify_notification_add_action(handle.pointer, id, label, { _, action, data in
                guard let data, let action else { return }
                let context = Unmanaged<DesktopActionContext>.fromOpaque(data).takeUnretainedValue()
                context.state?.actionInvoked(context, accept: String(cString: action) == "accept")
            }, Unmanaged.passRetained(context).toOpaque(), { data in
                guard let data else { return }
                Unmanaged<DesktopActionContext>.fromOpaque(data).release()
            })
        }
    }
}
