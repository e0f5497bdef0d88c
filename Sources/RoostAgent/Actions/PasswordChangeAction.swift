import RoostXMPP

/// `account.passwd`: XEP-0077 §3.3 password change on the logged-in stream.
public struct PasswordChangeAction: AccountAction {
    public static let command = "account.passwd"

    public var newPassword: String

    public init(newPassword: String) { self.newPassword = newPassword }

    public func perform(in context: ActionContext) async throws(ActionFailure) -> ActionDone {
        guard !newPassword.isEmpty else { throw ActionFailure(.invalidArgument, "the new password is empty") }
        _ = try await context.request(Registration.changePasswordRequest(account: context.account, newPassword: newPassword),
                                      doing: "changing the password of \(context.account)")
        return ActionDone("changed the password of \(context.account)")
    }
}
