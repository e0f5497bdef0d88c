/// Where notifications go. A sink is called by one `SinkRunner`, one notification at a time.
protocol NotificationSink: Sendable {
    var name: String { get }
    var typeName: String { get }
    /// Delivers one notification; bounded in time by the sink itself.
    func deliver(_ notification: OutgoingNotification) async throws(NotifyError)
    /// Sends anything held back (e-mail digests) and releases resources.
    func shutdown() async
}

extension NotificationSink {
    func shutdown() async {}
}
