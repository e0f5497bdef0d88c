import Foundation
import RoostCore
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
            let line: String
            switch await ProcessRunner.firstLine(ofCommand: command) {
            case .success(let value): line = value
            case .failure(let failure): throw .secretCommand(sink: sinkName, key: key, detail: failure.reason)
            }
            cached.withLock { $0 = line }
            return line
        }
    }
}
