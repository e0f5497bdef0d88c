public import Foundation
import RoostXMPP

/// Answers one request line of the control protocol: decodes it, runs the action on the agent's connection
/// for the account, and encodes the reply. Never throws: every problem becomes an error reply.
public struct ControlDispatcher: Sendable {
    /// Decodes a request's arguments: the answer to send at once (the arguments are wrong), or the work to run
    /// once the account's connection is found.
    typealias Handler = @Sendable (Data, ControlRequestID?) -> Decoded
    enum Decoded: Sendable {
        case invalid(Data)
        case valid(@Sendable (ActionContext) async -> Data)
    }

    private let handle: any AgentHandle
    private let priorities: [String: Int]
    private let omemoSend: [String: OMEMOSendSetting]
    private let dataDirectory: String
    /// `max_send_bytes`: the limit of a message queued while its account is offline.
    private let maxSendBytes: Int

    public init(handle: any AgentHandle, config: RoostConfig) {
        self.handle = handle
        var priorities: [String: Int] = [:]
        var omemoSend: [String: OMEMOSendSetting] = [:]
        for account in config.accounts {
            priorities[account.jid.lowercased()] = account.priority
            omemoSend[account.jid.lowercased()] = account.omemoSend
        }
        self.priorities = priorities
        self.omemoSend = omemoSend
        dataDirectory = (handle.archivePath as NSString).deletingLastPathComponent
        maxSendBytes = config.maxSendBytes
    }

    /// Every account command the socket accepts, by its `command` value.
    static let handlers: [String: Handler] = {
        var table: [String: Handler] = [:]
        func register<Action: AccountAction>(_ type: Action.Type) {
            table[Action.command] = { line, id in
                let request: ControlRequest<Action>
                do { request = try JSONDecoder().decode(ControlRequest<Action>.self, from: line) } catch {
                    return .invalid(ControlJSON.failure(ActionFailure(.badRequest, "invalid arguments for \(Action.command): \(DecodingProblem.describe(error))"), id: id))
                }
                guard let action = request.arguments ?? (try? JSONDecoder().decode(Action.self, from: Data("{}".utf8))) else {
                    return .invalid(ControlJSON.failure(ActionFailure(.badRequest, "\(Action.command) needs \"arguments\""), id: id))
                }
                return .valid { context in
                    do throws(ActionFailure) {
                        return ControlJSON.encode(ControlSuccess(id: id, ok: true, result: try await action.perform(in: context)))
                    } catch {
                        return ControlJSON.failure(error, id: id)
                    }
                }
            }
        }
        register(RosterFetchAction.self)
        register(RosterAddAction.self)
        register(RosterRemoveAction.self)
        register(RosterUpdateAction.self)
        register(SubscriptionAnswerAction.self)
        register(SendMessageAction.self)
        register(SendFileAction.self)
        register(MarkReadAction.self)
        register(VCardFetchAction.self)
        register(VCardPublishAction.self)
        register(PasswordChangeAction.self)
        register(UnregisterAction.self)
        register(OMEMOFingerprintsAction.self)
        register(OMEMOTrustAction.self)
        register(OMEMORetryAction.self)
        register(RoomJoinAction.self)
        register(RoomLeaveAction.self)
        register(RoomsListAction.self)
        register(InvitationDeclineAction.self)
        return table
    }()

    /// Commands answered by the agent itself rather than for an account.
    static let agentCommands = ["status", "ping", FileFetchRequest.command]

    /// `progress` sends an interim line to the client (only for requests that ask for progress).
    /// `agentQueriesOnly`: the connection sits in a slot kept for `status` and `ping`; anything else is refused.
    public func respond(to line: Data, agentQueriesOnly: Bool = false, progress: (@Sendable (Data) -> Void)? = nil) async -> Data {
        let header: ControlRequestHeader
        do { header = try JSONDecoder().decode(ControlRequestHeader.self, from: line) } catch {
            return ControlJSON.failure(ActionFailure(.badRequest, "not a request: \(DecodingProblem.describe(error)); expected a JSON object with \"command\""), id: nil)
        }
        if agentQueriesOnly && header.command != "status" && header.command != "ping" {
            return ControlJSON.failure(ActionFailure(.connection, "the agent is busy with \(ControlProtocol.maxConnections) control connections; "
                                                     + "only status and ping are answered now; try again"), id: header.id)
        }
        switch header.command {
        case "ping":
            return ControlJSON.encode(ControlSuccess(id: header.id, ok: true, result: ["pid": Int(getpid()), "protocol": ControlProtocol.version]))
        case "status":
            return ControlJSON.encode(ControlSuccess(id: header.id, ok: true, result: await status()))
        case FileFetchRequest.command:
            guard let request = try? JSONDecoder().decode(ControlRequest<FileFetchRequest>.self, from: line), let arguments = request.arguments else {
                return ControlJSON.failure(ActionFailure(.badRequest, "\(FileFetchRequest.command) needs \"arguments\": {\"ids\": [...]}"), id: header.id)
            }
            guard let files = handle.files else {
                return ControlJSON.failure(ActionFailure(.internalError, "this agent has no file download worker"), id: header.id)
            }
            return ControlJSON.encode(ControlSuccess(id: header.id, ok: true, result: await arguments.run(on: files)))
        default:
            break
        }
        guard let handler = Self.handlers[header.command] else {
            let known = (Self.agentCommands + Self.handlers.keys.sorted()).joined(separator: ", ")
            return ControlJSON.failure(ActionFailure(.badRequest, "unknown command '\(header.command)' (known: \(known))"), id: header.id)
        }
        // A malformed request is a bad request whatever state the account is in.
        let work: @Sendable (ActionContext) async -> Data
        switch handler(line, header.id) {
        case .invalid(let answer): return answer
        case .valid(let valid): work = valid
        }
        let account: String
        switch (header.account, handle.accountJIDs.count) {
        case (let named?, _):
            guard let match = handle.accountJIDs.first(where: { $0.caseInsensitiveCompare(named) == .orderedSame }) else {
                return ControlJSON.failure(ActionFailure(.unknownAccount, "this agent does not serve \(named) (it serves: \(handle.accountJIDs.joined(separator: ", ")))"), id: header.id)
            }
            account = match
        case (nil, 1):
            account = handle.accountJIDs[0]
        default:
            return ControlJSON.failure(ActionFailure(.badRequest, "the agent serves several accounts; name one in \"account\""), id: header.id)
        }
        let settings = handle.accountConfig(account)
        var request = ActionRequest(priority: settings?.priority ?? priorities[account.lowercased()] ?? -1,
                                    omemoSend: settings?.omemoSend ?? omemoSend[account.lowercased()] ?? .auto, dataDirectory: dataDirectory)
        let handle = self.handle
        request.onAccountRemoved = { await handle.stopAccount(account) }
        if header.progress == true, let progress {
            let id = header.id
            request.progress = { progress(ControlJSON.encode(ControlProgress(id: id, progress: $0))) }
        }
        // Through the account's session, which lends the action its client and records what it did.
        guard let answer = await handle.perform(for: account, request, work) else {
            let state = await handle.status().first { $0.account.caseInsensitiveCompare(account) == .orderedSame }?.state.description ?? "unknown"
            if header.command == SendMessageAction.command, let jid = JID(parsing: account),
               let send = (try? JSONDecoder().decode(ControlRequest<SendMessageAction>.self, from: line))?.arguments {
                // Reconnecting: the message waits in the outbox and goes out once the account is online.
                do {
                    let sent = try await send.queue(account: jid, state: state, archive: handle.archive(for: account),
                                                    archivePath: handle.archivePath, omemo: settings?.omemo ?? true,
                                                    omemoSend: request.omemoSend, limit: maxSendBytes)
                    return ControlJSON.encode(ControlSuccess(id: header.id, ok: true, result: sent))
                } catch {
                    return ControlJSON.failure(error, id: header.id)
                }
            }
            return ControlJSON.failure(ActionFailure(.connection, "\(account) is not online in the agent (\(state))"), id: header.id)
        }
        return answer
    }

    /// Runs `action` for `account` exactly as the same request on the control socket (notification buttons: a reply is
    /// `roost send`, Mark read `roost read --send`), and decodes its answer.
    func perform<Action: AccountAction>(_ action: Action, account: String) async -> Result<Action.Result, ActionFailure> {
        let answer = await respond(to: ControlJSON.encode(ControlRequest(command: Action.command, account: account, arguments: action)))
        if let success = try? JSONDecoder().decode(ControlSuccess<Action.Result>.self, from: answer), success.ok { return .success(success.result) }
        return .failure((try? JSONDecoder().decode(ControlFailureResponse.self, from: answer))?.error
                        ?? ActionFailure(.internalError, "the agent's answer could not be read"))
    }

    func status() async -> AgentStatusReport {
        let statistics = handle.writer.statistics
        var failingSince: Int64?
        var failure: String?
        if case .failing(let since, let cause) = handle.writer.health {
            failingSince = since
            failure = cause
        }
        return AgentStatusReport(pid: getpid(), protocolVersion: ControlProtocol.version, archive: handle.archivePath,
                                 committedBatches: statistics.batches, committedEvents: statistics.events,
                                 archiveFailingSince: failingSince, archiveFailure: failure, archiveBacklog: handle.writer.backlog,
                                 mirror: handle.mirror?.status(), sighupsHandled: handle.sighupsHandled, webView: handle.webView,
                                 accounts: await handle.status().map(AgentStatusReport.Account.init))
    }
}

/// A decoding error in one line a person can read (`DecodingError`'s description is a debug dump).
enum DecodingProblem {
    static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "invalid JSON" }
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map(\.stringValue).filter { !$0.isEmpty }
            return keys.isEmpty ? "" : " at \(keys.joined(separator: "."))"
        }
        switch error {
        case .dataCorrupted(let context): return context.codingPath.isEmpty ? "invalid JSON" : "invalid value\(path(context))"
        case .keyNotFound(let key, let context): return "missing \"\(key.stringValue)\"\(path(context))"
        case .typeMismatch(let type, let context): return "expected \(words(for: type))\(path(context))"
        case .valueNotFound(let type, let context): return "expected \(words(for: type))\(path(context))"
        @unknown default: return "invalid JSON"
        }
    }

    /// What a JSON value of a Swift type looks like, in words (never the type's Swift name).
    static func words(for type: Any.Type) -> String {
        switch type {
        case is String.Type, is Substring.Type: return "a string"
        case is Bool.Type: return "true or false"
        case is Int.Type, is Int64.Type, is Int32.Type, is UInt.Type, is UInt64.Type, is UInt32.Type, is UInt16.Type: return "an integer"
        case is Double.Type, is Float.Type: return "a number"
        default: break
        }
        let name = String(describing: type)
        if name.hasPrefix("Dictionary<") || name.hasPrefix("KeyedDecodingContainer") { return "a JSON object" }
        if name.hasPrefix("Array<") || name.hasPrefix("UnkeyedDecodingContainer") { return "a JSON array" }
        if name.hasPrefix("Optional<") { return "a value or null" }
        return "a JSON object"
    }
}
