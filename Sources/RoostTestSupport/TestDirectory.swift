import Foundation

/// A temporary folder for one test (config, archive), removed when the value goes away.
public final class TestDirectory: @unchecked Sendable {
    public let path: String

    public init(_ label: String = "roost-test") throws {
        path = NSTemporaryDirectory() + "\(label)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// A throwaway CA and a server certificate for `domain` (contrib/scripts/make-certs) in `certs/`; returns
    /// that folder (ca.crt, server.crt, server.key).
    public func makeCertificates(domain: String) throws -> String {
        let folder = path + "/certs"
        let log = path + "/make-certs.log"
        let status = try Subprocess.run(TestServer.packageRoot + "/contrib/scripts/make-certs", [folder, domain],
                                        environment: ProcessInfo.processInfo.environment, outputPath: log)
        guard status == 0 else {
            throw ScriptFailed(command: "make-certs", output: (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
        }
        return folder
    }

    /// Writes a file with mode 0600 and returns its path.
    @discardableResult
    public func write(_ name: String, _ text: String, mode: Int = 0o600) throws -> String {
        let file = "\(path)/\(name)"
        try text.write(toFile: file, atomically: false, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: file)
        return file
    }
}

extension TestServer {
    /// A config file for `roost` with one account on this server and an archive in `directory`.
    public func roostConfig(in directory: TestDirectory, account: String, password: String, extra: String = "") throws -> String {
        try directory.write("config.ini", """
            [general]
            archive_poll_seconds = 2
            \(extra)
            [archive]
            path = \(directory.path)/data/archive.sqlite

            [account \(account)]
            password = \(password)
            host = \(host)
            port = \(port)
            ca_file = \(caFile)

            """)
    }
}
