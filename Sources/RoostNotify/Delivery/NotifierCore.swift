import RoostCore

/// The rules: decides which events become notifications, coalesces them per conversation, caps the
/// rate, and hands the result to every sink's queue.
actor NotifierCore {
    private let config: NotifyConfig
    private let runners: [SinkRunner]
    private let log: @Sendable (LogLevel, String) -> Void
    private let clock: NotifyClock
    private let idle: IdleProbe
    private let store: NotifyStateStore
    private let text: NotificationText
    private var presence = PresenceTracker()
    private var rate: RateLimiter
    private var state: NotifyStateStore.State
    private var pending: [String: PendingConversation] = [:]
    private var generation = 0
    /// The open summary of each kind per account (`summaryKey`), which later catch-ups of that kind add to until the
    /// user is back on the account (writes or reads somewhere).
    private var summaries: [String: SummaryTally] = [:]

    /// Messages of one conversation not yet read elsewhere; `windowOpen` while further messages are only
    /// counted, to be shown as one update when the coalescing window ends.
    private struct PendingConversation {
        var latest: IncomingMessage
        var count = 0
        var windowOpen = false
        var dirty = false
        var generation: Int
    }

    init(config: NotifyConfig, runners: [SinkRunner], log: @escaping @Sendable (LogLevel, String) -> Void,
         clock: NotifyClock, idle: IdleProbe, store: NotifyStateStore) {
        self.config = config
        self.runners = runners
        self.log = log
        self.clock = clock
        self.idle = idle
        self.store = store
        text = NotificationText(config: config)
        rate = RateLimiter(perMinute: config.maxPerMinute)
        state = store.load(now: clock.milliseconds)
    }

    func handle(_ event: NotificationEvent) async {
        switch event {
        case let .message(message):
            await handleMessage(message)
        case let .subscriptionRequest(account, from, displayName, requestText):
            await handleRequest(account: account, from: from, displayName: displayName, text: requestText)
        case let .catchUpFinished(account, messages):
            await handleCatchUp(account: account, messages: messages)
        case let .conversationRead(account, conversation):
            pending[ConversationKey.make(account, conversation)] = nil
            closeSummaries(account)
            submit(OutgoingNotification(kind: .close, account: account, conversation: conversation, name: "", title: "", text: "",
                                        timestamp: clock.milliseconds))
        case let .ownPresence(account, resource, available, show):
            presence.update(account: account, resource: resource, available: available, show: show)
        case let .userActivity(account, conversation, at):
            presence.recordActivity(account: account, conversation: conversation, at: at)
            closeSummaries(account)
        case let .invitation(account, room, from, displayName, reason):
            await handleInvitation(account: account, room: room, from: from, displayName: displayName, reason: reason)
        case let .accountNeedsUser(account, title, cause):
            // Not a message: the rules about who wrote and when the user is present do not apply, and it comes once
            // per wait, so no rate limit either.
            submit(text.accountNeedsUser(account: account, title: title, cause: cause, at: clock.milliseconds))
        }
    }

    func flushSinks() async {
        for runner in runners { await runner.flush() }
    }

    func shutdownSinks() async {
        for runner in runners { await runner.shutdown() }
    }

    // MARK: Messages

    private func handleMessage(_ message: IncomingMessage) async {
        if !message.watches.isEmpty, handleWatched(message) { return }
        let key = ConversationKey.make(message.account, message.conversation)
        if let reason = contactRule(message) ?? timeRule() {
            suppressed(message.conversation, message.account, reason)
            return
        }
        if whenFor(message.conversation) == .away, let reason = await presentReason(account: message.account, conversation: message.conversation) {
            suppressed(message.conversation, message.account, reason)
            return
        }
        generation += 1
        var conversation = pending[key] ?? PendingConversation(latest: message, generation: generation)
        conversation.latest = message
        conversation.count += 1
        if conversation.windowOpen {
            conversation.dirty = true
            pending[key] = conversation
            return
        }
        pending[key] = conversation
        emitConversation(key)
    }

    /// A message watches matched notifies whatever the rules say (mute, group chat policy, presence), once, unless
    /// every matching watch respects quiet hours and it is quiet now; then the ordinary rules decide. Still within
    /// `max_per_minute`. True when handled.
    private func handleWatched(_ message: IncomingMessage) -> Bool {
        let quiet = timeRule() != nil
        let firing = config.watches.filter { message.watches.contains($0.name) && !(quiet && $0.quietHours == .respect) }
        guard !firing.isEmpty else {
            log(.debug, "watches \(message.watches.joined(separator: ", ")) matched a message in \(LogText.quote(message.conversation)) during quiet hours (quiet_hours = respect)")
            return false
        }
        guard rate.admit(now: clock.milliseconds) else {
            log(.debug, "not notifying the watched message in \(LogText.quote(message.conversation)): more than max_per_minute = \(config.maxPerMinute) notifications in the last minute")
            return true
        }
        noteNotified(account: message.account, timestamp: message.timestamp, rooms: message.isGroupchat)
        submit(text.watched(message, by: firing))
        return true
    }

    /// Shows the conversation's current state, then keeps further messages for one coalescing window.
    private func emitConversation(_ key: String) {
        guard var conversation = pending[key] else { return }
        let now = clock.milliseconds
        if rate.admit(now: now) {
            conversation.dirty = false
            let notification = text.message(conversation.latest, count: conversation.count)
            noteNotified(account: conversation.latest.account, timestamp: conversation.latest.timestamp, rooms: conversation.latest.isGroupchat)
            submit(notification)
        } else {
            log(.debug, "not notifying \(LogText.quote(conversation.latest.conversation)) yet: more than max_per_minute = \(config.maxPerMinute) notifications in the last minute")
            conversation.dirty = true
        }
        let window = conversation.dirty ? max(config.coalesceSeconds, 10) : config.coalesceSeconds
        conversation.windowOpen = window > 0
        pending[key] = conversation
        guard window > 0 else { return }
        let generation = conversation.generation
        let clock = self.clock
        Task {
            await clock.wait(.seconds(window))
            self.windowEnded(key, generation: generation)
        }
    }

    private func windowEnded(_ key: String, generation: Int) {
        guard var conversation = pending[key], conversation.generation == generation else { return }
        if conversation.dirty {
            emitConversation(key)
        } else {
            conversation.windowOpen = false
            pending[key] = conversation
        }
    }

    // MARK: Requests and catch-up

    private func handleRequest(account: String, from: String, displayName: String?, text requestText: String?) async {
        let jid = from.lowercased()
        var reason: String?
        if config.mute.contains(jid) { reason = "\(jid) is muted" }
        else if whenFor(jid) == .never { reason = whenRuleName(jid) + " = never" }
        else { reason = timeRule() }
        if reason == nil, whenFor(jid) == .away { reason = await presentReason(account: account, conversation: nil) }
        if let reason {
            log(.debug, "not notifying the contact request of \(LogText.quote(from)) (\(account)): \(LogText.quote(reason))")
            return
        }
        guard rate.admit(now: clock.milliseconds) else {
            log(.debug, "not notifying the contact request of \(LogText.quote(from)): more than max_per_minute = \(config.maxPerMinute) notifications in the last minute; `roost requests` lists it")
            return
        }
        submit(text.request(account: account, from: from, displayName: displayName, text: requestText, at: clock.milliseconds))
    }

    /// Like a contact request: its own notification, with Join/Decline on desktops that show actions.
    private func handleInvitation(account: String, room: String, from: String?, displayName: String?, reason: String?) async {
        let inviter = from.map { String($0.split(separator: "/", maxSplits: 1).first ?? Substring($0)).lowercased() }
        var reason2: String?
        if let inviter, config.mute.contains(inviter) { reason2 = "\(inviter) is muted" }
        else if config.mute.contains(room.lowercased()) { reason2 = "\(room) is muted" }
        else if let inviter, whenFor(inviter) == .never { reason2 = whenRuleName(inviter) + " = never" }
        else { reason2 = timeRule() }
        if reason2 == nil, whenFor(inviter ?? room) == .away { reason2 = await presentReason(account: account, conversation: nil) }
        if let reason2 {
            log(.debug, "not notifying the invitation to \(LogText.quote(room)) (\(account)): \(reason2); `roost rooms invites` lists it")
            return
        }
        guard rate.admit(now: clock.milliseconds) else {
            log(.debug, "not notifying the invitation to \(LogText.quote(room)): more than max_per_minute = \(config.maxPerMinute) notifications in the last minute; `roost rooms invites` lists it")
            return
        }
        submit(text.invitation(account: account, room: room, from: from, displayName: displayName, reason: reason, at: clock.milliseconds))
    }

    /// One summary for the chats, one for the rooms (never one replacing the other); each adds to the open one of
    /// its kind. Only messages newer than the last notified or summarised of their kind count. A message a watch
    /// matched is notified on its own instead (when the watch's rules let it).
    private func handleCatchUp(account: String, messages all: [IncomingMessage]) async {
        // Read before the watched messages move them.
        let cutoff = [false: lastNotified(account, rooms: false), true: lastNotified(account, rooms: true)]
        var messages: [IncomingMessage] = []
        for message in all {
            if !message.watches.isEmpty, message.timestamp > cutoff[message.isGroupchat]!, handleWatched(message) { continue }
            messages.append(message)
        }
        guard !messages.isEmpty else { return }
        guard config.catchUpSummary else {
            log(.debug, "\(account): catch-up brought \(messages.count) messages; no summary (catch_up_summary = false)")
            return
        }
        let kinds = [false, true].map { rooms in
            (rooms, messages.filter { $0.isGroupchat == rooms && $0.timestamp > cutoff[rooms]! && contactRule($0) == nil })
        }.filter { !$0.1.isEmpty }
        guard !kinds.isEmpty else {
            log(.debug, "\(account): catch-up brought \(messages.count) messages, none newer than the last notification or allowed by the rules; no summary")
            return
        }
        var reason = config.when == .never ? "when = never" : timeRule()
        if reason == nil, config.when == .away { reason = await presentReason(account: account, conversation: nil) }
        if let reason {
            log(.debug, "\(account): no summary of \(kinds.map(\.1.count).reduce(0, +)) caught-up messages: \(LogText.quote(reason))")
            return
        }
        for (rooms, fresh) in kinds {
            let key = Self.summaryKey(account, rooms: rooms)
            var tally = summaries[key] ?? SummaryTally(rooms: rooms)
            tally.add(fresh)
            summaries[key] = tally
            noteNotified(account: account, timestamp: fresh.map(\.timestamp).max() ?? 0, rooms: rooms)
            submit(text.summary(account: account, tally: tally, at: clock.milliseconds))
        }
    }

    private static func summaryKey(_ account: String, rooms: Bool) -> String {
        account.lowercased() + (rooms ? " rooms" : "")
    }

    private func closeSummaries(_ account: String) {
        summaries[Self.summaryKey(account, rooms: false)] = nil
        summaries[Self.summaryKey(account, rooms: true)] = nil
    }

    /// The newest message of this kind notified or summarised (the rooms' apart from the chats': a room's catch-up
    /// after the account's summary still counts what was said in the room before it); before: when Roost first ran.
    private func lastNotified(_ account: String, rooms: Bool) -> Int64 {
        state.lastNotifiedMs[Self.summaryKey(account, rooms: rooms)] ?? state.firstStartedMs
    }

    // MARK: Rules

    /// Rules that depend only on who wrote: group chat policy, mute, allow, per-contact `never`.
    private func contactRule(_ message: IncomingMessage) -> String? {
        let conversation = message.conversation.lowercased()
        if message.isGroupchat {
            switch config.roomOverrides[conversation] ?? config.groupchat {
            case .none: return "group chat notifications are off (\(groupchatRuleName(conversation)) = none)"
            case .mentions where !message.mentionsUser: return "group chat message without a mention (\(groupchatRuleName(conversation)) = mentions)"
            default: break
            }
        }
        if config.mute.contains(conversation) { return "\(conversation) is muted" }
        if !config.allow.isEmpty && !config.allow.contains(conversation) { return "\(conversation) is not in the allow list" }
        if whenFor(conversation) == .never { return whenRuleName(conversation) + " = never" }
        return nil
    }

    private func groupchatRuleName(_ room: String) -> String {
        config.roomOverrides[room] != nil ? "room.\(room)" : "groupchat"
    }

    private func timeRule() -> String? {
        guard let quiet = config.quietHours, quiet.contains(minuteOfDay: clock.minuteOfDay) else { return nil }
        return "quiet hours"
    }

    private func whenFor(_ conversation: String) -> NotifyWhen {
        config.contactOverrides[conversation.lowercased()] ?? config.when
    }

    private func whenRuleName(_ conversation: String) -> String {
        config.contactOverrides[conversation.lowercased()] != nil ? "contact.\(conversation.lowercased())" : "when"
    }

    /// nil when the user is away; otherwise why they count as present (and the notification is dropped).
    /// Away: no other resource is available with show empty/chat, OR the session is idle past idle_seconds,
    /// OR (recent_activity_minutes > 0) the user has not written in this conversation elsewhere that recently.
    private func presentReason(account: String, conversation: String?) async -> String? {
        let active = presence.activeResources(account: account)
        guard !active.isEmpty else { return nil }
        var reason = "you are present at another client (\(active.joined(separator: ", ")) available"
        if config.idleSeconds > 0 {
            if let idleSeconds = await idle.query() {
                if idleSeconds >= config.idleSeconds { return nil }
                reason += ", desktop idle only \(idleSeconds) s"
            }
        }
        if config.recentActivityMinutes > 0, let conversation {
            let now = clock.milliseconds
            guard let last = presence.lastActivity(account: account, conversation: conversation),
                  now - last <= Int64(config.recentActivityMinutes) * 60_000 else { return nil }
            reason += ", you wrote here \((now - last) / 60_000) min ago"
        }
        return reason + "; when = away"
    }

    private func suppressed(_ conversation: String, _ account: String, _ reason: String) {
        log(.debug, "not notifying a message in \(LogText.quote(conversation)) (\(account)): \(LogText.quote(reason))")
    }

    // MARK: Delivery

    private func submit(_ notification: OutgoingNotification) {
        for runner in runners { runner.submit(notification) }
    }

    /// Never later than now: a message's time comes from elsewhere, and one from the future would suppress every
    /// catch-up summary until then.
    private func noteNotified(account: String, timestamp: Int64, rooms: Bool) {
        let timestamp = min(timestamp, clock.milliseconds)
        let key = Self.summaryKey(account, rooms: rooms)
        guard timestamp > (state.lastNotifiedMs[key] ?? Int64.min) else { return }
        state.lastNotifiedMs[key] = timestamp
        store.save(state)
    }
}
