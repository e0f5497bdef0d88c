import RoostCore
import Foundation
import RoostArchive
import RoostXMPP
import RoostNotify

/// Keeping the account connected: one connection attempt at a time, the backoff after a failure, waiting for the
/// user when only a change by them can help (a refused password, a certificate that stops verifying), and the
/// answer to another client that keeps replacing this one.
extension AccountSession {
    // MARK: - Connecting

    func scheduleConnect(after delay: Duration) {
        connectTask?.cancel()
        connectTask = Task {
            if delay > .zero { try? await Task.sleep(for: delay) }
            guard !Task.isCancelled else { return }
            await self.connectOnce()
        }
    }

    func setState(_ new: AccountState) {
        state = new
        stateChanged()
    }

    func connectOnce() async {
        guard !stopping else { return }
        // What the last connection delivered must be committed and acknowledged first: its acknowledgements
        // then count towards the `h` this connection resumes with (and while the archive cannot be written,
        // this waits, leaving the server to keep everything).
        _ = await settleCommits()
        guard !stopping else { return }
        if !passwordKnown {
            setState(.connecting(attempt: backoff.attempt + 1))
            do {
                client.updatePassword(try await account.resolvePassword())
                passwordKnown = true
            } catch {
                guard !stopping else { return }
                // Before the account logged in, often passing (a keyring still locked at login): retried with backoff
                // like a network problem. Once it did, a command that fails or hangs needs the user; one that could
                // not be started for want of descriptors or memory never does.
                if loggedIn, case .passwordCommandFailed = error {
                    needsUser(error.description)
                } else {
                    retryLater(error.description, level: .error)
                }
                return
            }
        }
        setState(.connecting(attempt: backoff.attempt + 1))
        do {
            _ = try await client.connect()
            // The rest happens in stream order, when `.connected` comes through `consumeEvents`.
        } catch {
            handleConnectFailure(error)
        }
    }

    func handleConnectFailure(_ error: ClientError) {
        guard !stopping else { return }
        if error.needsUser {
            // A wrong password may have been changed meanwhile: ask the command again next time.
            if case .command = account.password { passwordKnown = false }
            needsUser(error.description)
            return
        }
        if case .streamError("conflict", let text) = error, text?.localizedCaseInsensitiveContains("removed") != true {
            replaced()
            return
        }
        retryLater(error.description, level: .warning)
    }

    /// A passing problem (network, server, a shortage of descriptors or memory): tried again with backoff, up to
    /// `reconnect_max_seconds`.
    func retryLater(_ why: String, level: LogLevel) {
        waitingOutReplacement = false
        let now = takeRetryRequest()
        let delay = now ? .zero : backoff.nextDelay()
        setState(.waitingToReconnect(nextTry: Date(timeIntervalSinceNow: delay / .seconds(1)), lastError: why))
        let line = "\(jid): \(LogText.quote(why)); " + (now ? Self.retryingForSIGHUP : "retrying in \(AccountState.duration(delay))")
        if level == .error { log.error(line) } else { log.warning(line) }
        scheduleConnect(after: delay)
    }

    /// Authentication or certificate trouble, or (once the account logged in) a password_command that fails or
    /// hangs: the user must act. An account that logged in during this run waits for them, trying again with a
    /// backoff from a minute up to an hour, and the agent keeps running whatever happens. An account that has not
    /// is taken for a wrong config: tried again hourly — unless no account has logged in at all, and then the agent
    /// stops (status 78) once every account failed; it says so itself. SIGHUP (`retryNow`) tries again at once.
    func needsUser(_ why: String) {
        waitingOutReplacement = false
        let now = takeRetryRequest()
        if loggedIn {
            let delay = now ? .zero : userBackoff.nextDelay()
            setState(.waitingForUser(nextTry: Date(timeIntervalSinceNow: delay / .seconds(1)), cause: why))
            log.error("\(jid): \(LogText.quote(why)) — " + (now ? Self.retryingForSIGHUP : "Roost keeps running and tries again in "
                      + "\(AccountState.duration(delay)) (then less often, at least hourly), or at once on SIGHUP (systemctl --user reload roost)"))
            tellUser(cause: why, loginRefused: true)
            scheduleConnect(after: delay)
            return
        }
        if now {
            setState(.failed(why, nextTry: Date()))
            log.error("\(jid): \(LogText.quote(why)) — \(Self.retryingForSIGHUP)")
            scheduleConnect(after: .zero)
            return
        }
        setState(.failed(why, nextTry: Date(timeIntervalSinceNow: Self.userFixRetry / .seconds(1))))
        scheduleConnect(after: Self.userFixRetry)
        if history.anyAccountLoggedIn {
            announceWait(why)
        } else {
            // What happens next is the agent's to say: it stops if no account logs in, else `agentKeepsRunning` follows.
            log.error("\(jid): \(LogText.quote(why))")
        }
    }

    /// The agent keeps running (an account logged in): a session that failed before, and did not say what it does
    /// next, says it now.
    func agentKeepsRunning() {
        guard !stopping, case .failed(let why, _) = state, !userTold else { return }
        announceWait(why)
    }

    func announceWait(_ why: String) {
        log.error("\(jid): \(LogText.quote(why)) — Roost keeps running for the other accounts and tries this one again in "
                  + "\(Int(Self.userFixRetry / .seconds(60))) minutes, or at once on SIGHUP (systemctl --user reload roost)")
        tellUser(cause: why, loginRefused: true)
    }

    /// One notification (the configured sinks) per wait: not again at each retry, nor after SIGHUP.
    func tellUser(cause: String, loginRefused: Bool) {
        guard !userTold else { return }
        userTold = true
        let title = loginRefused ? "Roost cannot log in to \(jid)" : "Roost stopped reconnecting \(jid)"
        notifications.post(.accountNeedsUser(account: jid.description, title: title, cause: cause))
    }

    /// The server closed the stream with `conflict`: another client logged in with this resource and replaced this
    /// one. Two agents sharing a config (a laptop and a server) would take turns forever, each login throwing the
    /// other out — rejoining rooms, reading archives, republishing the OMEMO device list. So: wait a little longer
    /// each time, and after `maxReplacements` in a row wait for the user (SIGHUP), leaving the account to the other.
    func replaced() {
        if let since = onlineSince, ContinuousClock.now - since >= Self.replacementsForgottenAfter {
            replacements = 0
            replacementBackoff.reset()
        }
        replacements += 1
        let resource = client.configuration.resource
        let who = "another client logged in as \(jid)/\(resource) (the same resource as Roost) and replaced Roost"
        guard replacements < Self.maxReplacements else {
            waitingOutReplacement = false
            let cause = "\(who), \(replacements) times in a row; Roost stopped reconnecting so the two stop taking turns — "
                + "give one of them another `resource`, or stop the other one"
            setState(.waitingForUser(nextTry: nil, cause: cause))
            log.error("\(jid): \(cause). Roost keeps running and tries this account again only on SIGHUP (systemctl --user reload roost)")
            tellUser(cause: cause, loginRefused: false)
            return
        }
        waitingOutReplacement = true
        let delay = replacementBackoff.nextDelay()
        setState(.waitingToReconnect(nextTry: Date(timeIntervalSinceNow: delay / .seconds(1)),
                                     lastError: "\(who) (\(replacements) of \(Self.maxReplacements) times in a row)"))
        log.warning("\(jid): \(who) (\(replacements) of \(Self.maxReplacements) times in a row); reconnecting in "
                    + "\(AccountState.duration(delay)); replaced \(Self.maxReplacements) times in a row, "
                    + "Roost stops reconnecting until SIGHUP. Give one of them another `resource`.")
        scheduleConnect(after: delay)
    }

    static let retryingForSIGHUP = "trying again now (SIGHUP came during this attempt)"

    func takeRetryRequest() -> Bool {
        defer { retryRequested = false }
        return retryRequested
    }

    /// SIGHUP: an account that waits for the user (or for its backoff) tries again now, asking its
    /// password_command again; one that is trying (its password_command may hang for 30 s) tries again as soon
    /// as this attempt fails.
    /// Returns whether the account was waiting (or connecting), so SIGHUP says nothing about accounts that are not.
    @discardableResult
    func retryNow() -> Bool {
        guard !stopping else { return false }
        switch state {
        case .connecting:
            forgetFailures()
            retryRequested = true
            log.info("\(jid): an attempt is under way; if it fails, trying again at once")
            return true
        case .failed, .waitingToReconnect, .waitingForUser:
            forgetFailures()
            waitingOutReplacement = false
            log.info("\(jid): trying again now")
            scheduleConnect(after: .zero)
            return true
        default:
            return false
        }
    }

    /// The user acted (SIGHUP): backoffs and counts start again, and the password_command is asked again.
    func forgetFailures() {
        passwordKnown = false
        backoff.reset()
        userBackoff.reset()
        replacements = 0
        replacementBackoff.reset()
    }

    /// The network changed (an address or route appeared): an account waiting out its backoff retries now —
    /// not one waiting out another client that replaced it.
    func networkChanged() {
        guard !stopping, case .waitingToReconnect = state, !waitingOutReplacement else { return }
        log.info("\(jid): the network changed; reconnecting now")
        backoff.reset()
        scheduleConnect(after: .zero)
    }
}
