import Foundation
public import Testing

/// Something a test needs from the machine: a test server, root, a tool, IPv6 on loopback, the suite's
/// notification log, the suite's Dovecot.
///
/// On a developer machine a suite whose requirement is missing is skipped. In CI, contrib/scripts/test sets
/// `ROOST_TEST_REQUIRE_ALL=1`: every requirement then counts as met, so the suite runs and fails loudly on
/// what is missing (`TestRequirement.check` names it) instead of leaving the run green.
public enum TestRequirement: Sendable, CustomStringConvertible {
    /// The shared test server (contrib/scripts/prosody-test-server or ejabberd-test-server).
    case server
    /// The user is root (to add addresses to the loopback interface, …).
    case root
    /// An executable at this path.
    case tool(String)
    /// ::1 can be bound (the kernel may have IPv6 disabled).
    case ipv6Loopback
    /// `ROOST_TEST_NOTIFY_LOG`: the log of the suite's mock notification daemon (contrib/scripts/test).
    case notificationLog
    /// The suite's private Dovecot (contrib/scripts/dovecot-test-server, started by contrib/scripts/test).
    case dovecot

    /// True when the suite must not skip anything (CI): a missing requirement is then a failure.
    public static var requireAll: Bool {
        ProcessInfo.processInfo.environment["ROOST_TEST_REQUIRE_ALL"] == "1"
    }

    public var isMet: Bool {
        switch self {
        case .server: TestServer.shared != nil
        case .root: getuid() == 0
        case .tool(let path): FileManager.default.isExecutableFile(atPath: path)
        case .ipv6Loopback: Self.canBindIPv6Loopback()
        case .notificationLog: ProcessInfo.processInfo.environment["ROOST_TEST_NOTIFY_LOG"].map { !$0.isEmpty } ?? false
        case .dovecot: DovecotServer.shared != nil
        }
    }

    public var description: String {
        switch self {
        case .server: "a test XMPP server (run the suite with contrib/scripts/test, or start contrib/scripts/prosody-test-server)"
        case .root: "root (CI runs as root)"
        case .tool(let path): "\(path) (contrib/scripts/install-deps installs it)"
        case .ipv6Loopback: "IPv6 on the loopback interface (sysctl net.ipv6.conf.lo.disable_ipv6=0; contrib/scripts/test enables it as root)"
        case .notificationLog: "ROOST_TEST_NOTIFY_LOG, the mock notification daemon's log that contrib/scripts/test sets up"
        case .dovecot: "the test Dovecot (run the suite with contrib/scripts/test, or start contrib/scripts/dovecot-test-server; apt package dovecot-imapd)"
        }
    }

    /// Whether a suite or test needing all of `requirements` runs: always in CI, else when they are met.
    public static func enabled(_ requirements: [TestRequirement]) -> Bool {
        requireAll || requirements.allSatisfy(\.isMet)
    }

    /// Throws, naming what is missing, unless every requirement is met. Call it where the test starts.
    public static func check(_ requirements: TestRequirement...) throws {
        let missing = requirements.filter { !$0.isMet }
        if !missing.isEmpty { throw RequirementMissing(missing: missing.map(\.description)) }
    }

    private static func canBindIPv6Loopback() -> Bool {
        let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_addr = in6addr_loopback
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) == 0 }
        }
    }
}

public struct RequirementMissing: Error, CustomStringConvertible {
    public let missing: [String]
    public init(missing: [String]) { self.missing = missing }
    public var description: String { "this test needs " + missing.joined(separator: "; and ") }
}

extension Trait where Self == ConditionTrait {
    /// Runs the suite or test only where its requirements are met — and always in CI, where it then fails on
    /// the missing one (call `TestRequirement.check` at its start), so nothing is skipped silently.
    public static func requires(_ requirements: TestRequirement...) -> Self {
        .enabled(if: TestRequirement.enabled(requirements), "needs \(requirements.map(\.description).joined(separator: ", "))")
    }
}
