import Foundation
import Testing
@testable import RoostCore

/// The one rendezvous (`OneShot`, and `Deadline` on it): the first value wins, every waiter — task or thread —
/// gets it, a thread's deadline passes without it. In memory, in milliseconds.
@Suite("OneShot")
struct OneShotTests {
    @Test func theFirstValueWinsForTasksAndThreads() async {
        let shot = OneShot<Int>()
        #expect(shot.fulfil(1))
        #expect(!shot.fulfil(2))
        #expect(await shot.value == 1)
        #expect(shot.wait() == 1)
    }

    @Test(.timeLimit(.minutes(1))) func everyWaitingTaskAndThreadGetsTheValue() async {
        let shot = OneShot<String>()
        let threadGot = OneShot<String?>()
        let thread = Thread { threadGot.fulfil(shot.wait()) }
        thread.start()
        await withTaskGroup(of: String.self) { group in
            for _ in 0..<8 { group.addTask { await shot.value } }
            Thread { shot.fulfil("ready") }.start()
            for await value in group { #expect(value == "ready") }
        }
        #expect(await threadGot.value == "ready")
    }

    @Test func aThreadsDeadlinePassesWithoutTheValue() {
        let shot = OneShot<Int>()
        #expect(shot.wait(until: Date().addingTimeInterval(0.05)) == nil)
        shot.fulfil(7)
        #expect(shot.wait(until: Date().addingTimeInterval(0.05)) == 7)
    }

    @Test(.timeLimit(.minutes(1))) func aRaceEndsWithTheWorkOrTheTimeoutAndIgnoresTheLoser() async {
        let fast = await Deadline.race(seconds: 60, timedOut: "late") { outcome in
            Thread { outcome.fulfil("work") }.start()
        }
        #expect(fast == "work")
        let kept = OneShot<OneShot<String>>()
        let slow = await Deadline.race(seconds: 0, timedOut: "late") { outcome in kept.fulfil(outcome) }
        #expect(slow == "late")
        #expect(!(await kept.value).fulfil("work"), "the work's value after the timeout must be dropped")
    }

    /// Roost's threads carry their names to the kernel (`top -H`, `perf`, the ingest benchmark's CPU by thread): a
    /// Foundation `Thread`'s name alone does not, it kept its starter's (a dispatch worker's `…oot.default-qos`).
    @Test(.timeLimit(.minutes(1))) func aThreadIsNamedForTheKernel() async throws {
        let seen = OneShot<String>()
        startThread(named: "roost.test.named.thread") {
            seen.fulfil((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "")
        }
        #expect(await seen.value == "roost.test.name\n")
    }
}
