import Foundation

/// Runs a `password_command` and takes the first line of its standard output.
///
/// Standard error and standard input stay attached to Roost's, so a command that asks for a passphrase
/// (gpg, pass, secret-tool) can still do so. Its output is never put into an error.
struct PasswordCommand {
    let command: String
    let account: String

    func run() throws(ConfigError) -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        let stdout = Pipe()
        process.standardOutput = stdout
        do {
            try process.run()
        } catch {
            throw .passwordCommandFailed(account: account, reason: "could not be started: \(error.localizedDescription)")
        }
        // Read before waiting: a command writing more than a pipe buffer would otherwise block forever.
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()

        if process.terminationReason == .uncaughtSignal {
            throw .passwordCommandFailed(account: account, reason: "was killed by signal \(process.terminationStatus)")
        }
        if process.terminationStatus != 0 {
            throw .passwordCommandFailed(account: account, reason: "exited with status \(process.terminationStatus)")
        }
        // Bytes, not Characters: Swift treats "\r\n" as one Character, which would hide the line end.
        var firstLine = output.prefix { $0 != UInt8(ascii: "\n") }
        if firstLine.last == UInt8(ascii: "\r") { firstLine = firstLine.dropLast() }
        guard let password = String(data: firstLine, encoding: .utf8) else {
            throw .passwordCommandFailed(account: account, reason: "printed something that is not UTF-8 text")
        }
        if password.isEmpty {
            throw .passwordCommandFailed(account: account, reason: "printed an empty first line; it must print the password")
        }
        return password
    }
}
