import RoostCore

/// Desktop notifications through libnotify. Every libnotify call runs on one process-wide GLib thread,
/// and the caller waits at most `timeout_seconds` for it, so a slow or missing notification server
/// never holds anything else up.
final class DesktopSink: NotificationSink {
    let name: String
    let typeName = "desktop"
    private let timeoutSeconds: Int
    private let state: DesktopState

    /// What a notification may take at most at once: GLib's main contexts (a pipe each where there is no eventfd),
    /// the bus socket, libnotify reading an icon.
    static let descriptorsNeeded = 16

    /// libnotify keeps one D-Bus proxy per process, bound to the main context it was created on, so
    /// every desktop sink shares this thread.
    static let thread = GMainThread(name: "roost-desktop-notify")
    /// Notifications whose caller gave up waiting (`timeout_seconds`) stay queued for a server that hangs; past
    /// this many, new ones are not shown (each sink's own queue already drops the oldest and counts it).
    static let maxWaiting = 32

    init(name: String, timeoutSeconds: Int, actions: (any NotificationActions)?, log: @escaping @Sendable (LogLevel, String) -> Void,
         serverRetrySeconds: Int = 60) {
        self.name = name
        self.timeoutSeconds = timeoutSeconds
        state = DesktopState(sinkName: name, actions: actions, log: log, serverRetrySeconds: serverRetrySeconds)
    }

    func deliver(_ notification: OutgoingNotification) async throws(NotifyError) {
        // GLib aborts the whole process when it cannot make the pipe or eventfd of a main context (its own thread's
        // at first use, one per synchronous D-Bus call, besides the bus connection's socket): with fewer descriptors
        // free than such a call may take, this notification is not shown — and the agent goes on archiving.
        if let shortage = ResourceShortage.descriptorShortageNow(count: Self.descriptorsNeeded) {
            throw .desktop("not shown: \(ResourceShortage.text(shortage)) (fewer than \(Self.descriptorsNeeded) file descriptors free for the D-Bus call)")
        }
        let state = self.state
        let result: Result<Void, NotifyError> = await Deadline.race(
            seconds: timeoutSeconds, timedOut: .failure(.timedOut(sink: name, seconds: timeoutSeconds))
        ) { once in
            let queued = Self.thread.run(ifFewerThan: Self.maxWaiting) { once.fulfil(state.show(notification)) }
            if !queued {
                _ = once.fulfil(.failure(.desktop("not shown: \(Self.maxWaiting) notifications already wait for the notification "
                                              + "server, which does not answer")))
            }
        }
        try result.get()
    }

    func shutdown() async {
        let state = self.state
        await Deadline.race(seconds: timeoutSeconds, timedOut: ()) { once in
            Self.thread.run {
                state.forgetAll()
                once.fulfil(())
            }
        }
    }
}
