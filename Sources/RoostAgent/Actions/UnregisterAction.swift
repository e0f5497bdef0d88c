import RoostXMPP

/// `account.unregister`: XEP-0077 §3.2, deletes the account on the server. The server may close the stream
/// right after its answer (or instead of it); either means the account is gone.
public struct UnregisterAction: AccountAction {
    public static let command = "account.unregister"

    public init() {}

    public func perform(in context: ActionContext) async throws(ActionFailure) -> ActionDone {
        do {
            _ = try await context.client.request(Registration.cancelRequest(account: context.account))
        } catch .disconnected, .notConnected {
            // The stream ended after the removal was sent: that is how servers confirm it.
        } catch {
            throw ActionFailure.from(error, doing: "deleting \(context.account)")
        }
        return ActionDone("deleted \(context.account) on the server")
    }
}
