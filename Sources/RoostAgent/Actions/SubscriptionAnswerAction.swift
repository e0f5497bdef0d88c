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
        if let archivePath = context.archivePath { try Self.requirePending(from: contact, context, archivePath: archivePath) }
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

    /// Only a request someone sent and nobody answered yet can be accepted or denied: anything else is a
    /// mistake (a typo, an answered request), not a silent pre-approval.
    private static func requirePending(from contact: JID, _ context: ActionContext, archivePath: String) throws(ActionFailure) {
        var pending: [SubscriptionRequestRow] = []
        if FileManager.default.fileExists(atPath: archivePath) {
            do { pending = try ArchiveReader(path: archivePath).pendingSubscriptionRequests(account: context.account.description) } catch {
                throw ActionFailure(.internalError, "could not read the friend requests in the archive: \(error)")
            }
        }
        guard pending.contains(where: { $0.jid.lowercased() == contact.description }) else {
            throw ActionFailure(.notFound, "\(contact) has no friend request waiting for an answer (`roost requests` lists those that do)")
        }
    }
}
