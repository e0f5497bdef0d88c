import Foundation
import Testing
@testable import RoostAgent

/// A stop request (SIGTERM) sent the moment the agent says it is up is never lost: `roost serve` once hung after a
/// SIGTERM that came while libdispatch was still installing its handler (asynchronously, on its manager thread),
/// with the signal set to be ignored meanwhile.
@Suite("Signal watcher")
struct SignalWatcherTests {
    @Test func aSignalRightAfterTheWatcherStartsIsDelivered() async throws {
        // Many rounds: the window was short. SIGUSR2, which nothing else in the test process uses.
        for round in 1...50 {
            let watcher = SignalWatcher(signals: [SIGUSR2])
            kill(getpid(), SIGUSR2)
            let received = try await firstSignal(of: watcher, within: .seconds(30))
            #expect(received == SIGUSR2, "round \(round): the signal sent right after the watcher started was lost")
            if received != SIGUSR2 { return }
        }
    }

    private func firstSignal(of watcher: SignalWatcher, within timeout: Duration) async throws -> Int32? {
        try await withThrowingTaskGroup(of: Int32?.self) { group in
            group.addTask {
                for await signal in watcher.signals { return signal }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}
