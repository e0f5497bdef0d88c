import RoostXMPP

/// `roster.update`: renames a contact or sets its groups (`roost roster rename` / `roost roster group`).
public struct RosterUpdateAction: AccountAction {
    public static let command = "roster.update"

    public var jid: String
    /// The new name; "" removes it; nil leaves it.
    public var name: String?
    /// The new groups (empty: no group); nil leaves them.
    public var groups: [String]?

    public init(jid: String, name: String? = nil, groups: [String]? = nil) {
        self.jid = jid
        self.name = name
        self.groups = groups
    }

    public func perform(in context: ActionContext) async throws(ActionFailure) -> RosterEntry {
        let contact = try JIDArgument.bare(jid)
        let items = try await RosterOperations.fetch(context)
        guard var item = RosterOperations.find(contact, in: items) else {
            throw ActionFailure(.notFound, "\(contact) is not on the roster of \(context.account); add it with `roost roster add`")
        }
        if let name { item.name = name.isEmpty ? nil : name }
        if let groups { item.groups = RosterOperations.cleanGroups(groups) }
        try await RosterOperations.set(item, context)
        return RosterEntry(item)
    }
}
