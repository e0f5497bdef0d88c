import RoostXMPP

/// `roster.add`: puts the contact on the roster and asks for a subscription to its presence (the seed app's
/// "add friend"). An existing entry keeps its subscription; name and groups are replaced when given.
public struct RosterAddAction: AccountAction {
    public static let command = "roster.add"

    public var jid: String
    public var name: String?
    public var groups: [String]
    /// The optional text sent with the request.
    public var message: String?

    public init(jid: String, name: String? = nil, groups: [String] = [], message: String? = nil) {
        self.jid = jid
        self.name = name
        self.groups = groups
        self.message = message
    }

    public func perform(in context: ActionContext) async throws(ActionFailure) -> RosterEntry {
        let contact = try JIDArgument.bare(jid)
        guard contact != context.account else { throw ActionFailure(.invalidArgument, "\(contact) is this account itself") }
        let items = try await RosterOperations.fetch(context)
        var item = RosterOperations.find(contact, in: items) ?? RosterItem(jid: contact)
        if let name { item.name = name.isEmpty ? nil : name }
        if !groups.isEmpty { item.groups = RosterOperations.cleanGroups(groups) }
        try await RosterOperations.set(item, context)
        if item.subscription != .to && item.subscription != .both {
            try context.send(Presence(type: .subscribe, to: contact, status: message), doing: "asking \(contact) for a subscription")
            item.askPending = true
            try await context.archive.record([RosterOperations.event(item, account: context.account),
                                              RosterOperations.subscription(.subscribe, to: contact, context, message: message)])
        }
        // A friend the user adds may see the user's presence too, so the friendship ends as `both`: pre-approved
        // where the server offers it (RFC 6121 §3.4), else the agent answers the contact's request when it comes
        // (`RoutingContext.approvedContacts`). Where the contact already asked, this `subscribed` is the answer.
        if item.subscription != .from && item.subscription != .both && context.client.supportsPreApproval {
            try context.send(Presence(type: .subscribed, to: contact), doing: "pre-approving \(contact)")
            try await context.archive.record([RosterOperations.subscription(.subscribed, to: contact, context)])
        }
        return RosterEntry(item)
    }
}
