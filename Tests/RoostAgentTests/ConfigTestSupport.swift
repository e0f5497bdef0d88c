import Foundation
@testable import RoostAgent

/// A temporary directory acting as $HOME, with helpers to write config files into it.
final class ConfigSandbox {
    let home: String

    init() throws {
        home = FileManager.default.temporaryDirectory
            .appendingPathComponent("roost-config-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: home)
    }

    var environment: [String: String] {
        ["HOME": home]
    }

    /// Writes `text` to `relativePath` under the sandbox with `mode`, returning the absolute path.
    @discardableResult
    func write(_ text: String, to relativePath: String = "config.ini", mode: Int = 0o600) throws -> String {
        let path = home + "/" + relativePath
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        return path
    }

    func load(_ text: String, mode: Int = 0o600) throws(ConfigError) -> RoostConfig {
        let path: String
        do {
            path = try write(text, mode: mode)
        } catch {
            fatalError("cannot write test config: \(error)")
        }
        return try RoostConfig.load(explicitPath: path, environment: environment)
    }

    /// The problems of an invalid config, or an empty list when it loaded or failed otherwise.
    func problems(_ text: String) -> [ConfigProblem] {
        do {
            _ = try load(text)
            return []
        } catch {
            if case let .invalid(_, problems) = error { return problems }
            return []
        }
    }
}
