import Foundation

/// Runs a program directly (argv, no shell) with a deadline, feeding `input` on stdin.
enum ProcessRunner {
    struct Outcome: Sendable {
        var status: Int32 = -1
        var output = Data()
        var timedOut = false
        var launchFailure: String?
    }

    /// The process and its pipes, handed to the thread that waits for it.
    private final class Running: @unchecked Sendable {
        let process = Process()
        let stdin = Pipe()
        let stdout = Pipe()
    }

    private static let ignoreSIGPIPE: Void = {
        // A program that exits without reading its stdin must not kill Roost with SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
    }()

    static func run(argv: [String], extraEnvironment: [String: String] = [:], input: Data, timeoutSeconds: Int,
                    captureOutput: Bool) async -> Outcome {
        _ = ignoreSIGPIPE
        guard let program = argv.first, let path = resolve(program) else {
            return Outcome(launchFailure: "program not found: \(argv.first ?? "(empty)")")
        }
        let running = Running()
        running.process.executableURL = URL(fileURLWithPath: path)
        running.process.arguments = Array(argv.dropFirst())
        running.process.environment = ProcessInfo.processInfo.environment.merging(extraEnvironment) { $1 }
        running.process.standardInput = running.stdin
        running.process.standardOutput = captureOutput ? running.stdout : FileHandle.nullDevice
        running.process.standardError = FileHandle.standardError
        do {
            try running.process.run()
        } catch {
            return Outcome(launchFailure: "could not start \(path): \(error.localizedDescription)")
        }
        var outcome = await Deadline.blocking(seconds: timeoutSeconds, timedOut: Outcome(timedOut: true)) {
            let writer = Thread {
                try? running.stdin.fileHandleForWriting.write(contentsOf: input)
                try? running.stdin.fileHandleForWriting.close()
            }
            writer.start()
            var result = Outcome()
            if captureOutput {
                result.output = (try? running.stdout.fileHandleForReading.readToEnd()) ?? Data()
            }
            running.process.waitUntilExit()
            result.status = running.process.terminationStatus
            return result
        }
        if outcome.timedOut {
            running.process.terminate()
            let pid = running.process.processIdentifier
            Task {
                try? await Task.sleep(for: .seconds(2))
                if running.process.isRunning { kill(pid, SIGKILL) }
            }
            outcome.status = -1
        }
        return outcome
    }

    /// An absolute or relative path is used as given; a bare name is looked up in $PATH.
    static func resolve(_ program: String) -> String? {
        if program.contains("/") {
            return FileManager.default.isExecutableFile(atPath: program) ? program : nil
        }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") where !directory.isEmpty {
            let candidate = "\(directory)/\(program)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}
