/// One thing the CLI asks for on an account (add a contact, send a message...). The same value runs inside
/// the agent (sent over the control socket as JSON) or in the CLI's own one-shot login, so both paths behave
/// identically.
public protocol AccountAction: Codable, Sendable {
    associatedtype Result: Codable, Sendable
    /// The control protocol's `command` value, e.g. `roster.add`.
    static var command: String { get }
    func perform(in context: ActionContext) async throws(ActionFailure) -> Result
}

/// The result of an action that only reports success.
public struct ActionDone: Codable, Sendable, Equatable {
    public var message: String

    public init(_ message: String) { self.message = message }
}
