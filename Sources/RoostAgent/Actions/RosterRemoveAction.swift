import RoostXMPP

/// `roster.remove`: removes the contact; the server cancels the subscriptions both ways (RFC 6121 §2.5).
public struct RosterRemoveAction: AccountAction {
    public static let command = "roster.remove"

    public var jid: String

    public init(jid: String) { self.jid = jid }

    public func perform(in context: ActionContext) async throws(ActionFailure) -> ActionDone {
        let contact = try JIDArgument.bare(jid)
        let items = try await RosterOperations.fetch(context)
        guard RosterOperations.find(contact, in: items) != nil else {
            throw ActionFailure(.notFound, "\(contact) is not on the roster of \(context.account)")
        }
        try await RosterOperations.set(RosterItem(jid: contact, subscription: .remove), context)
        return ActionDone("removed \(contact)")
    }
}
