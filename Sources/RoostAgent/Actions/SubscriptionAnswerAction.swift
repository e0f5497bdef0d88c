import Foundation
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
        if let archivePath = context.archivePath, try !Self.isPending(from: contact, context, archivePath: archivePath) {
            let askInstead = "to ask \(contact) for a subscription, use `roost roster add \(contact)`"
            if context.archiveHasEveryRequest {
                throw ActionFailure(.notFound, "\(contact) has no friend request waiting for an answer (`roost requests` lists those that do); \(askInstead)")
            }
            // Without an agent, a request sent while nothing ran is known to the server only. Denying it is a
            // refusal whoever asked; accepting it unseen would pre-approve the address (RFC 6121 §3.4), a typo too.
            if accept {
                throw ActionFailure(.notFound, "no friend request from \(contact) has reached Roost; one sent while Roost was not running arrives once `roost run` is online (`roost requests` then lists it), and can be accepted then; \(askInstead)")
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

    /// Whether `contact` sent a request nobody answered yet. Only such a request can be accepted or denied:
    /// anything else is a mistake (a typo, an answered request), not a silent pre-approval.
    private static func isPending(from contact: JID, _ context: ActionContext, archivePath: String) throws(ActionFailure) -> Bool {
        guard FileManager.default.fileExists(atPath: archivePath) else { return false }
        do {
            return try ArchiveReader(path: archivePath).pendingSubscriptionRequests(account: context.account.description)
                .contains { $0.jid.lowercased() == contact.description }
        } catch {
            throw ActionFailure(.internalError, "could not read the friend requests in the archive: \(error)")
        }
    }
}
