import Foundation
import Synchronization

/// Resolves a token or password once and keeps it in memory; a command is run again only after it failed.
final class SecretResolver: Sendable {
    private let source: SecretSource
    private let sinkName: String
    private let key: String
    private let cached = Mutex<String?>(nil)

    init(source: SecretSource, sinkName: String, key: String) {
        self.source = source
        self.sinkName = sinkName
        self.key = key
    }

    func value() async throws(NotifyError) -> String {
        if let value = cached.withLock({ $0 }) { return value }
        switch source {
        case let .literal(text):
            return text
        case let .command(command):
            let outcome = await ProcessRunner.run(argv: ["/bin/sh", "-c", command], input: Data(), timeoutSeconds: 30, captureOutput: true)
            if outcome.timedOut { throw .secretCommand(sink: sinkName, key: key, detail: "did not finish within 30 s") }
            if let failure = outcome.launchFailure { throw .secretCommand(sink: sinkName, key: key, detail: failure) }
            guard outcome.status == 0 else { throw .secretCommand(sink: sinkName, key: key, detail: "exited with status \(outcome.status)") }
            let line = String(decoding: outcome.output, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).first
                .map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\r")) } ?? ""
            guard !line.isEmpty else { throw .secretCommand(sink: sinkName, key: key, detail: "printed nothing") }
            cached.withLock { $0 = line }
            return line
        }
    }
}
