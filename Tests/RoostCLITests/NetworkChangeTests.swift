import Foundation
import Testing
import RoostTestSupport

/// An account waiting out its reconnect backoff retries as soon as the network changes.
@Suite("Reconnect on network change", .requires(.root, .tool("/usr/sbin/ip")))
struct NetworkChangeTests {
    @Test func addressChangeTriggersAnImmediateRetry() throws {
        try TestRequirement.check(.root, .tool("/usr/sbin/ip"))
        let dir = try TestDirectory()
        // Nothing listens on port 9 of loopback: the account keeps failing and backs off.
        let config = try dir.write("config.ini", """
            [general]
            reconnect_max_seconds = 300
            [archive]
            path = \(dir.path)/data/archive.sqlite
            [account nobody@roost.test]
            password = x
            host = 127.0.0.1
            port = 9
            """)
        let roost = try RoostBinary.start(["run", "--config", config, "-vv"])
        defer { roost.stop() }
        try roost.waitForLog("retrying in")
        // The netlink socket is bound before this line is logged: a change from now on reaches the agent.
        try roost.waitForLog("watching the network for changes")
        #expect(!roost.stderrSoFar.contains("the network changed"))
        let address = "127.77.\(Int.random(in: 1...250)).\(Int.random(in: 1...250))/32"
        #expect(ip(["addr", "add", address, "dev", "lo"]) == 0)
        defer { _ = ip(["addr", "del", address, "dev", "lo"]) }
        try roost.waitForLog("the network changed; reconnecting now", timeout: 60)
    }

    private func ip(_ arguments: [String]) -> Int32 {
        (try? RoostBinary.runProgram("/usr/sbin/ip", arguments))?.status ?? -1
    }
}
