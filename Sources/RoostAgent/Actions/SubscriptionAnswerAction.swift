import RoostArchive
import RoostXMPP

/// `requests.answer`: accepts (`subscribed`, optionally asking back: the seed's "accept and add") or denies
/// (`unsubscribed`) a contact's subscription request. The answer is archived, which settles the stored request.
public struct SubscriptionAnswerAction: AccountAction {
    public static let command = "requests.answer"

    public var jid: String
    public var accept: Bool
    /// On accept: also subscribe to the contact's presence, adding it to the roster.
    public var addBack: Bool

    public init(jid: String, accept: Bool, addBack: Bool = false) {
        self.jid = jid
        self.accept = accept
        self.addBack = addBack
    }

    public func perform(in context: ActionContext) async throws(ActionFailure) -> ActionDone {
        let contact = try JIDArgument.bare(jid)
        // Accepting a request nobody sent would pre-approve a stranger (servers then add a roster entry): refused.
        // (Denying one is harmless, and allowed: a request that came while nothing ran is not archived yet.)
        if accept, let path = context.archivePath {
            let pending = (try? ArchiveReader(path: path).pendingSubscriptionRequests(account: context.account.description)) ?? []
            guard pending.contains(where: { $0.jid.caseInsensitiveCompare(contact.description) == .orderedSame }) else {
                throw ActionFailure(.notFound, "\(contact) has no pending friend request (see `roost requests`); "
                    + "to ask \(contact) for a subscription, use `roost roster add \(contact)`")
            }
        }
        guard accept else {
            try context.send(Presence(type: .unsubscribed, to: contact), doing: "denying the request of \(contact)")
            try await context.archive.record([RosterOperations.subscription(.unsubscribed, to: contact, context)])
            return ActionDone("denied the request of \(contact)")
        }
        try context.send(Presence(type: .subscribed, to: contact), doing: "accepting the request of \(contact)")
        try await context.archive.record([RosterOperations.subscription(.subscribed, to: contact, context)])
        guard addBack else { return ActionDone("accepted the request of \(contact)") }
        _ = try await RosterAddAction(jid: contact.description).perform(in: context)
        return ActionDone("accepted the request of \(contact) and asked for theirs")
    }
}
