import RoostXMPP

/// `account.unregister`: XEP-0077 §3.2, deletes the account on the server. The server may close the stream
/// right after its answer or instead of it — ejabberd answers from the session's own JID and then ends the
/// stream with `<conflict/>` "User removed" — and each of these means the account is gone. A running agent
/// then stops the account rather than logging in again to an account that no longer exists.
public struct UnregisterAction: AccountAction {
    public static let command = "account.unregister"

    public init() {}

    public func perform(in context: ActionContext) async throws(ActionFailure) -> ActionDone {
        do {
            _ = try await context.client.request(Registration.cancelRequest(account: context.account))
        } catch .disconnected, .notConnected {
            // The stream ended after the removal was sent: that is how servers confirm it.
        } catch .streamError(let condition, let text) where condition == "conflict" && text?.localizedCaseInsensitiveContains("removed") == true {
            // ejabberd's "User removed", should it arrive before the answer.
        } catch {
            throw ActionFailure.from(error, doing: "deleting \(context.account)")
        }
        await context.accountRemoved()
        return ActionDone("deleted \(context.account) on the server")
    }
}
