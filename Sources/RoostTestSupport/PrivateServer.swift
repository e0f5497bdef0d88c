import Foundation

/// A server of a test's own (for tests that restart or kill the server, which must not disturb the shared
/// one other tests use at the same time), of the same kind as the shared one (`ROOST_TEST_SERVER_KIND`).
public final class PrivateServer: @unchecked Sendable {
    /// The server's software is installed (or the suite demands it, and then fails loudly if it is not).
    public static var isAvailable: Bool {
        let program = kind == .prosody ? "/usr/bin/prosody" : "/usr/bin/erl"
        return TestRequirement.enabled([.tool(program)])
    }

    static var kind: TestServer.Kind {
        ProcessInfo.processInfo.environment["ROOST_TEST_SERVER_KIND"].flatMap(TestServer.Kind.init(rawValue:)) ?? .prosody
    }

    public let directory: String
    public let kind: TestServer.Kind
    public private(set) var server: TestServer

    /// - Parameter hibernationSeconds: how long the server keeps a dropped stream-management session.
    public init(hibernationSeconds: Int = 60) throws {
        kind = Self.kind
        directory = NSTemporaryDirectory() + "roost-\(kind.rawValue)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Self.script(kind, ["start"], directory: directory, extra: [kind.resumeTimeoutVariable: String(hibernationSeconds)])
        guard let loaded = TestServer.load(directory: directory) else { throw TestServerMissing() }
        server = loaded
    }

    deinit {
        _ = try? Self.script(kind, ["clean"], directory: directory)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Stops and starts it again on the same ports with the same data.
    public func restart() throws { try Self.script(kind, ["restart"], directory: directory) }
    public func stop() throws { try Self.script(kind, ["stop"], directory: directory) }

    @discardableResult
    static func script(_ kind: TestServer.Kind, _ arguments: [String], directory: String, extra: [String: String] = [:]) throws -> String {
        var env = ProcessInfo.processInfo.environment
        env[kind.directoryVariable] = directory
        for (k, v) in extra { env[k] = v }
        let logPath = NSTemporaryDirectory() + "roost-script-\(UUID().uuidString.prefix(8)).log"
        defer { try? FileManager.default.removeItem(atPath: logPath) }
        let status = try Subprocess.run(kind.script, arguments, environment: env, outputPath: logPath)
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        guard status == 0 else { throw ScriptFailed(command: "\(kind.rawValue)-test-server " + arguments.joined(separator: " "), output: text) }
        return text
    }
}

public struct ScriptFailed: Error, CustomStringConvertible {
    public let command: String
    public let output: String
    public var description: String { "\(command) failed:\n\(output)" }
}
