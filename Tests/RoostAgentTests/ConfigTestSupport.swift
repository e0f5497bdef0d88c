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

    /// A self-signed CA certificate (valid to 2126), for `ca_file`, which must be a loadable PEM file.
    static let certificatePEM = """
        -----BEGIN CERTIFICATE-----
        MIIBljCCATugAwIBAgIUHnJyb0Hv/VBQ6CcF/aqTh1SKbUswCgYIKoZIzj0EAwIw
        HzEdMBsGA1UEAwwUUm9vc3QgY29uZmlnIHRlc3QgQ0EwIBcNMjYxMjA2MTY0NDA1
        WhgPMjEyNjExMTIxNjQ0MDVaMB8xHTAbBgNVBAMMFFJvb3N0IGNvbmZpZyB0ZXN0
        IENBMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEl8UPuJN+IGlnquDX0npdNKNl
        vtXI72Hn3k2m13or2h54OBBvu3ZdXwwBoZS1CXyuzj/r8uIkzTQBl0c1ifAD2aNT
        MFEwHQYDVR0OBBYEFMye7MjGihJhPOp2T96MqWO1RR5PMB8GA1UdIwQYMBaAFMye
        7MjGihJhPOp2T96MqWO1RR5PMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwID
        SQAwRgIhAJL09VALWcPayzaX0v7Gb5QM01lxeFV1qx+CJtektqPVAiEAwt67/v4r
        dSp0naV0Y7b9A0I61T3CMcKOLhDGfV3C5NU=
        -----END CERTIFICATE-----

        """

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
