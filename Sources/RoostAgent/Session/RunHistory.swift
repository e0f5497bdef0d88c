import Synchronization

/// What the whole run has seen, shared by the agent and its sessions: whether any account has logged in since
/// `roost run` started. Until one has, a config that cannot log in is taken for a wrong config (every account
/// failing stops the agent with status 78); from then on, nothing an account meets stops the agent.
final class RunHistory: Sendable {
    private let loggedIn = Mutex(false)

    var anyAccountLoggedIn: Bool { loggedIn.withLock { $0 } }

    /// True the first time.
    @discardableResult
    func markLoggedIn() -> Bool {
        loggedIn.withLock { value in
            defer { value = true }
            return !value
        }
    }
}
