import RoostArchive

/// A contact's presence as `roost roster` and `roost presence` describe it, from the newest presence of each resource.
struct PresenceSummary {
    /// Available resources, best first (by priority).
    let online: [PresenceRow]
    /// When the contact was last seen available (see `ArchiveReader.lastSeen`); nil when never.
    let lastSeen: Int64?

    init(latest: [PresenceRow], lastSeen: Int64?) {
        online = latest.filter { $0.availability == .available }.sorted { ($0.priority ?? 0) > ($1.priority ?? 0) }
        self.lastSeen = lastSeen
    }

    var isOnline: Bool { !online.isEmpty }

    /// `online`, `away`, `dnd`, ... of the best resource, or `offline`.
    var availability: String {
        guard let best = online.first else { return "offline" }
        return best.show ?? "online"
    }

    var statusText: String? { online.first?.status }
}
