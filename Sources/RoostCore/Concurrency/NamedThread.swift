import Foundation
internal import CSystem

/// Starts one of Roost's own threads, named for the kernel too: `top -H`, `perf` and `/proc/PID/task/*/comm` show the
/// name (its first 15 bytes, the kernel's limit). On Linux, Foundation's `Thread.name` does not reach the kernel: a
/// new thread keeps the name of the one that started it — most often a dispatch worker's (`…oot.default-qos`).
/// The one way Roost starts a thread of its own.
package func startThread(named name: String, stackSize: Int? = nil, _ body: @escaping @Sendable () -> Void) {
    let thread = Thread {
        _ = roost_name_thread(name)
        body()
    }
    thread.name = name
    if let stackSize { thread.stackSize = stackSize }
    thread.start()
}
