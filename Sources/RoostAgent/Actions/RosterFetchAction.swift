import RoostXMPP

/// `roster.list`: the roster as the server has it now (and archived, so the archive agrees).
public struct RosterFetchAction: AccountAction {
    public static let command = "roster.list"

    public init() {}

    public func perform(in context: ActionContext) async throws(ActionFailure) -> RosterSnapshot {
        let items = try await RosterOperations.fetch(context)
        try await context.archive.record(items.map { RosterOperations.event($0, account: context.account) })
        return RosterSnapshot(items: items.map(RosterEntry.init).sorted { $0.jid < $1.jid })
    }
}
