import Foundation

/// A Prosody of a test's own (for tests that restart or kill the server, which must not disturb the
/// shared one other tests use at the same time).
public final class PrivateServer: @unchecked Sendable {
    /// Prosody is installed (or the suite demands it, and then fails loudly if it is not).
    public static var isAvailable: Bool {
        TestServer.isRequired || FileManager.default.isExecutableFile(atPath: "/usr/bin/prosody")
    }

    public let directory: String
    public private(set) var server: TestServer

    public init(hibernationSeconds: Int = 60) throws {
        directory = NSTemporaryDirectory() + "roost-prosody-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Self.script(["start"], directory: directory, extra: ["ROOST_PROSODY_SMACKS_HIBERNATION": String(hibernationSeconds)])
        guard let loaded = TestServer.load(directory: directory) else { throw TestServerMissing() }
        server = loaded
    }

    deinit {
        _ = try? Self.script(["clean"], directory: directory)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Stops and starts it again on the same ports with the same data.
    public func restart() throws { try Self.script(["restart"], directory: directory) }
    public func stop() throws { try Self.script(["stop"], directory: directory) }

    @discardableResult
    static func script(_ arguments: [String], directory: String, extra: [String: String] = [:]) throws -> String {
        var env = ProcessInfo.processInfo.environment
        env["ROOST_PROSODY_DIR"] = directory
        for (k, v) in extra { env[k] = v }
        let logPath = NSTemporaryDirectory() + "roost-script-\(UUID().uuidString.prefix(8)).log"
        defer { try? FileManager.default.removeItem(atPath: logPath) }
        let status = try Subprocess.run(TestServer.packageRoot + "/contrib/scripts/prosody-test-server", arguments,
                                        environment: env, outputPath: logPath)
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        guard status == 0 else { throw ScriptFailed(command: arguments.joined(separator: " "), output: text) }
        return text
    }
}

public struct ScriptFailed: Error, CustomStringConvertible {
    public let command: String
    public let output: String
    public var description: String { "prosody-test-server \(command) failed:\n\(output)" }
}
