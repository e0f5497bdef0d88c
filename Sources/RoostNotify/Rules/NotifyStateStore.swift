import Foundation

/// The small state that must survive restarts: per account, the timestamp of the newest message already
/// notified (or summarised), so a catch-up never reports older messages again; and when Roost first ran,
/// so the first sync of an old archive is not reported at all. A JSON file, mode 0600.
struct NotifyStateStore: Sendable {
    let path: String?

    struct State: Codable, Sendable {
        var firstStartedMs: Int64
        var lastNotifiedMs: [String: Int64] = [:]
    }

    func load(now: Int64) -> State {
        guard let path, let data = FileManager.default.contents(atPath: path),
              var state = try? JSONDecoder().decode(State.self, from: data) else {
            let fresh = State(firstStartedMs: now)
            save(fresh)
            return fresh
        }
        // A time after now was written by a Roost that believed the stamps senders put on their messages; left
        // alone it would keep every catch-up summary back until then.
        if state.lastNotifiedMs.values.contains(where: { $0 > now }) || state.firstStartedMs > now {
            state.lastNotifiedMs = state.lastNotifiedMs.mapValues { min($0, now) }
            state.firstStartedMs = min(state.firstStartedMs, now)
            save(state)
        }
        return state
    }

    func save(_ state: State) {
        guard let path else { return }
        guard let data = try? JSONEncoder().encode(state) else { return }
        let directory = (path as NSString).deletingLastPathComponent
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let temporary = path + ".tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: data, attributes: [.posixPermissions: 0o600]) else { return }
        _ = rename(temporary, path)
    }
}
