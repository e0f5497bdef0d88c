import Foundation
import RoostAgent
import RoostArchive

/// `roost requests`: friend requests waiting for an answer; accept (optionally asking back) or deny them.
struct RequestsCommand: Command {
    static let name = "requests"
    static let summary = "list pending friend (subscription) requests; accept or deny them"
    static let usage = "[options] [accept WHO [--add] | deny WHO]"
    static let arguments: [ArgumentKind] = [.subcommands([Subcommand("accept", [.pendingRequest]), Subcommand("deny", [.pendingRequest])])]
    static let discussion = """
        Without a subcommand, lists the subscription requests contacts sent that are not answered yet, as the \
        agent archived them (newest first, each dated when it first arrived). accept WHO lets WHO see your \
        presence; with --add you also ask for theirs and put them on your roster. deny WHO refuses. WHO is a \
        requester's JID or the start of it. Answers are archived and settle the request; answering a request \
        that does not exist is an error (to ask someone for a subscription: `roost roster add JID`).
        accept and deny go through the running agent; when none runs, roost logs in once itself with the same \
        config, answers and logs out.
        """
    static let options: [OptionSpec] = [
        .flag("add", help: "accept: also subscribe to the contact and add it to the roster"),
    ]

    enum Action {
        case list
        case answer(SubscriptionAnswerAction)
    }

    let action: Action

    init(parsed: ParsedArguments) throws(UsageError) {
        let words = parsed.positionals
        switch words.first {
        case nil:
            action = .list
        case "accept", "deny":
            guard words.count == 2 else { throw UsageError("usage: roost requests \(words[0]) JID", command: parsed.command) }
            action = .answer(SubscriptionAnswerAction(jid: words[1], accept: words[0] == "accept", addBack: parsed.flag("add")))
        case let other?:
            throw UsageError("unknown requests subcommand '\(other)' (accept, deny)", command: parsed.command)
        }
        if case .answer(let a) = action, !a.accept, parsed.flag("add") {
            throw UsageError("--add only goes with accept", command: parsed.command)
        }
    }

    func run(context: CommandContext) async throws -> ExitCode {
        let listing = if case .list = action { true } else { false }
        let link = try AgentLink(context: context, command: "roost requests", reading: listing)
        let output = context.output
        switch action {
        case .list:
            guard FileManager.default.fileExists(atPath: link.config.archivePath) else {
                if !context.options.json { output.note("no pending requests (no archive yet)") }
                return .ok
            }
            let reader = try ArchiveAccess.reader(context)
            let pending = try reader.pendingSubscriptionRequests(account: link.account.jid)
            for request in pending {
                if context.options.json {
                    output.jsonLine(["jid": .string(request.jid), "message": .string(request.message),
                                     "received": .string(TimeText.utc(request.createdAt))])
                } else {
                    output.line("\(TimeText.local(request.createdAt)) \(request.jid)" + (request.message.map { ": \($0)" } ?? ""))
                }
            }
            if pending.isEmpty, !context.options.json { output.note("no pending requests for \(link.account.jid)") }
        case .answer(var answer):
            answer.jid = try requester(answer.jid, accepting: answer.accept, link: link, context: context)
            let (done, route) = try await link.perform(answer)
            if context.options.json {
                output.jsonLine(["ok": true, "jid": .string(answer.jid.lowercased()), "accepted": .bool(answer.accept),
                                 "added": .bool(answer.addBack), "via": .string(route.rawValue)])
            } else {
                output.line(done.message)
            }
        }
        return .ok
    }

    /// The pending requester `typed` names (a JID or the start of one). Accepting without a pending request is
    /// an error pointing to `roost roster add`; denying a JID nobody archived a request from is allowed (a
    /// request that came while nothing ran is known to the server only).
    private func requester(_ typed: String, accepting: Bool, link: AgentLink, context: CommandContext) throws -> String {
        guard FileManager.default.fileExists(atPath: link.config.archivePath) else {
            if accepting || !typed.contains("@") { throw NoRequest(jid: typed) }
            return typed
        }
        let reader = try ArchiveAccess.reader(context, config: link.config)
        let pending = try reader.pendingSubscriptionRequests(account: link.account.jid).map(\.jid)
        let jid: String
        do throws(ArchiveError) {
            jid = try reader.resolve(typed, among: pending, what: "pending friend request")
        } catch {
            if case .names(.unknown) = error { throw NoRequest(jid: typed) }
            throw ArchiveFailure(error: error)
        }
        guard pending.contains(where: { $0.caseInsensitiveCompare(jid) == .orderedSame }) else {
            if accepting { throw NoRequest(jid: typed) }
            return jid
        }
        return jid
    }

    struct NoRequest: CommandFailure {
        let jid: String
        var exitCode: ExitCode { .nothingFound }
        var description: String {
            "\(jid) has no pending friend request (see `roost requests`); to ask \(jid) for a subscription, use `roost roster add \(jid)`"
        }
    }
}
