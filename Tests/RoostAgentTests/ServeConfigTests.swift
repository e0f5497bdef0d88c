import Foundation
import Testing
@testable import RoostAgent

/// `[serve]`: the web view inside `roost run`.
@Suite("Config: [serve]")
struct ServeConfigTests {
    @Test func defaultsAndValues() throws {
        let sandbox = try ConfigSandbox()
        let defaults = try sandbox.load("[archive]\npath = /tmp/a.sqlite\n")
        #expect(defaults.serve == ServeConfig())
        #expect(!defaults.serve.enabled && defaults.serve.port == 8765 && defaults.serve.listen == "127.0.0.1")
        let config = try sandbox.load("""
            [serve]
            enabled = true
            port = 0
            listen = ::1
            allow_remote = false
            allow_hosts = roost.home.arpa, laptop
            """)
        #expect(config.serve.enabled && config.serve.port == 0 && config.serve.listen == "::1")
        #expect(config.serve.allowHosts == ["roost.home.arpa", "laptop"])
    }

    @Test func badValuesAreReportedWithTheirLines() throws {
        let sandbox = try ConfigSandbox()
        let problems = sandbox.problems("""
            [serve]
            enabled = sometimes
            port = 70000
            listen = localhost
            colour = blue
            """)
        #expect(problems.map(\.line) == [2, 3, 4, 5])
        #expect(problems[2].message.contains("IP address"))
        #expect(sandbox.problems("[serve web]\nenabled = true\n").first?.message.contains("[serve] takes no name") == true)
    }
}
