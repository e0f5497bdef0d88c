import Foundation
import RoostCore
public import RoostArchive

/// What `status` answers: the agent process and each account, as `roost status` prints them.
public struct AgentStatusReport: Codable, Sendable, Equatable {
    public struct Account: Codable, Sendable, Equatable {
        public var account: String
        /// `idle`, `connecting`, `online`, `reconnecting` (a passing problem), `waiting` (the account logged in during
        /// this run and now needs the user: a refused password or certificate, a hung password_command, another
        /// client with the same resource), `failed` (it never logged in during this run: the config is likely wrong)
        /// or `stopped`.
        public var state: String
        /// The state in words, with the last error.
        public var detail: String
        /// Why the account is not online, while it is reconnecting, waiting or failed (absent from older agents).
        public var cause: String?
        /// When it tries again by itself (UTC milliseconds); nil while it waits for SIGHUP only, or is not waiting.
        public var nextTry: Int64?
        public var server: String?
        public var resource: String?
        public var streamManagement: Bool
        /// UTC milliseconds of the last completed read of the server archive.
        public var lastCatchUp: Int64?
        /// Sent stanzas the server has not acknowledged yet.
        public var unacknowledgedOutbound: Int
        /// How long the oldest of them has waited, in seconds (absent from older agents, and when none waits).
        public var unacknowledgedOldestSeconds: Int?
        public var rejectedStanzas: Int
        /// Roost's presence priority and how many other clients of the account are available (absent from
        /// agents older than these fields).
        public var priority: Int?
        public var otherClientsOnline: Int?
        /// Group chats the agent is in now (absent from agents older than group chat support).
        public var roomsJoined: Int?
        /// Contacts in the roster as last loaded; absent until it has loaded in this run (and from older agents).
        public var rosterContacts: Int?
        /// Connections established in this run, and how many resumed the previous session (absent from older agents).
        public var logins: Int?
        public var sessionsResumed: Int?
        /// Roost's OMEMO device id once published in this run (absent before, without OMEMO, and from older agents).
        public var omemoDevice: UInt32?

        public var isFailed: Bool { state == "failed" }
        /// Failed or waiting for the user: `roost status` exits 3.
        public var needsUser: Bool { state == "failed" || state == "waiting" }

        /// Online at a negative priority with no other client available: the server treats the account as
        /// offline, so messages to the bare JID go to offline storage (Roost archives them through MAM all
        /// the same), and once that is full — ejabberd's default keeps 100 — senders get error bounces.
        /// Sent stanzas have waited for the server's acknowledgement longer than a healthy link takes: Roost asks
        /// for one after half the keepalive interval, so after two intervals the server is not answering.
        public func acknowledgementOverdue(keepaliveSeconds: Int) -> Bool {
            unacknowledgedOutbound > 0 && (unacknowledgedOldestSeconds ?? 0) >= 2 * keepaliveSeconds
        }

        public var serverStoresOffline: Bool {
            state == "online" && (priority ?? 0) < 0 && otherClientsOnline == 0
        }
    }

    public var pid: Int32
    public var protocolVersion: Int
    public var archive: String
    /// Batches and events the agent committed since it started.
    public var committedBatches: Int
    public var committedEvents: Int
    /// Since when archive writes fail (UTC milliseconds) and why; nil while writing works.
    public var archiveFailingSince: Int64?
    public var archiveFailure: String?
    /// Events waiting to be committed.
    public var archiveBacklog: Int?
    /// `[mirror]`: where the Maildir stands (absent without a mirror, and from older agents).
    public var mirror: MirrorStatus?
    /// SIGHUPs the agent has finished handling (the config read again and applied or refused, waiting accounts told
    /// to try again); absent from older agents.
    public var sighupsHandled: Int?
    /// The web view's address (`[serve]` in `roost run`, without its access token) once it serves; absent before,
    /// without it, and from older agents.
    public var webView: String?
    public var accounts: [Account]
}

extension AgentStatusReport.Account {
    init(_ status: AccountStatus) {
        account = status.account
        switch status.state {
        case .idle: state = "idle"
        case .connecting: state = "connecting"
        case .online: state = "online"
        case .waitingToReconnect: state = "reconnecting"
        case .waitingForUser: state = "waiting"
        case .failed: state = "failed"
        case .stopped: state = "stopped"
        }
        detail = status.state.description
        cause = status.state.cause
        nextTry = status.state.nextTry.map(Timestamp.milliseconds)
        server = status.server
        resource = status.boundResource
        streamManagement = status.streamManagement
        lastCatchUp = status.lastCatchUp.map(Timestamp.milliseconds)
        unacknowledgedOutbound = status.unacknowledgedOutbound
        unacknowledgedOldestSeconds = status.unacknowledgedOldestSeconds
        rejectedStanzas = status.rejectedStanzas
        priority = status.priority
        otherClientsOnline = status.otherClientsOnline
        roomsJoined = status.roomsJoined
        rosterContacts = status.rosterContacts
        logins = status.logins
        sessionsResumed = status.sessionsResumed
        omemoDevice = status.omemoDevice
    }
}
