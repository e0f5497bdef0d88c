import RoostCore
import Foundation
import RoostArchive
import RoostXMPP

/// The roster round trips the roster actions share: fetch, set, archive.
enum RosterOperations {
    static func fetch(_ context: ActionContext) async throws(ActionFailure) -> [RosterItem] {
        let answer = try await context.request(Roster.getRequest(), doing: "fetching the roster")
        return Roster.items(in: answer)
    }

    static func find(_ jid: JID, in items: [RosterItem]) -> RosterItem? {
        items.first { $0.jid.bare == jid.bare }
    }

    /// Sets the item on the server and records it (the agent also archives the server's push; both agree).
    static func set(_ item: RosterItem, _ context: ActionContext) async throws(ActionFailure) {
        _ = try await context.request(Roster.setRequest(item), doing: "updating the roster entry of \(item.jid)")
        try await context.archive.record([event(item, account: context.account)])
    }

    static func event(_ item: RosterItem, account: JID) -> ArchiveEvent {
        let now = Timestamp.now()
        if item.subscription == .remove {
            return .rosterRemoval(account: account.description, jid: item.jid.description, timestamp: now)
        }
        return .rosterItem(RosterItemRecord(account: account.description, jid: item.jid.description, name: item.name, groups: item.groups,
                                            subscription: item.subscription.rawValue, ask: item.askPending ? "subscribe" : nil,
                                            timestamp: now))
    }

    static func subscription(_ kind: SubscriptionRecord.Kind, to jid: JID, _ context: ActionContext, message: String? = nil) -> ArchiveEvent {
        .subscription(SubscriptionRecord(account: context.account.description, jid: jid.description, direction: .outgoing,
                                         kind: kind, message: message, timestamp: Timestamp.now()))
    }

    /// Groups as given: trimmed, no empties, no duplicates, order kept.
    static func cleanGroups(_ groups: [String]) -> [String] {
        var seen = Set<String>()
        return groups.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && seen.insert($0).inserted }
    }
}
