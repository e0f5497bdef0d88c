import Foundation
import Synchronization
internal import CGLib

/// A thread running its own GLib main loop. libnotify delivers action callbacks on the main context that
/// was thread-default when it created its D-Bus proxy; running every libnotify call here makes that this
/// context, and keeps libnotify's blocking calls (up to 25 s without a server) away from everyone else.
/// `roost serve` runs its HTTP server (libsoup) on a GMainThread of its own.
package final class GMainThread: @unchecked Sendable {
    private let context: OpaquePointer
    private let loop: OpaquePointer
    /// Works queued and not yet run (see `run(ifFewerThan:_:)`).
    private let pending = Pending()

    private final class Pending: Sendable {
        let count = Atomic<Int>(0)
    }

    private struct Handles: @unchecked Sendable {
        let context: OpaquePointer
        let loop: OpaquePointer
    }

    private final class Work {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    package init(name: String) {
        context = g_main_context_new()
        loop = g_main_loop_new(context, 0)
        // The thread holds its own references, so the loop outlives this object until it has quit.
        let handles = Handles(context: g_main_context_ref(context), loop: g_main_loop_ref(loop))
        startThread(named: name) {
            g_main_context_push_thread_default(handles.context)
            g_main_loop_run(handles.loop)
            g_main_context_pop_thread_default(handles.context)
            g_main_loop_unref(handles.loop)
            g_main_context_unref(handles.context)
        }
    }

    deinit {
        g_main_loop_quit(loop)
        g_main_loop_unref(loop)
        g_main_context_unref(context)
    }

    /// Queues `work` to run on the thread, in order. For callers that wait for their work before queueing more
    /// (the web server's calls, its workers' completions — bounded by its connection and worker limits): what they
    /// queue is bounded by how many of them wait.
    package func run(_ work: @escaping @Sendable () -> Void) {
        pending.count.add(1, ordering: .relaxed)
        let pending = self.pending
        let box = Unmanaged.passRetained(Work { work(); pending.count.subtract(1, ordering: .relaxed) }).toOpaque()
        let source = g_idle_source_new()
        g_source_set_callback(source, { data in
            let work = Unmanaged<Work>.fromOpaque(data!).takeRetainedValue()
            work.body()
            return 0
        }, box, nil)
        g_source_attach(source, context)
        g_source_unref(source)
    }

    /// Queues `work` unless `limit` works already wait; false (and nothing queued) then. For callers that stop
    /// waiting after a deadline while their work stays queued: a thread stuck in a C call (libnotify's D-Bus calls
    /// block up to 25 s) must not collect an unbounded queue from them.
    package func run(ifFewerThan limit: Int, _ work: @escaping @Sendable () -> Void) -> Bool {
        guard pending.count.load(ordering: .relaxed) < limit else { return false }
        run(work)
        return true
    }

    /// Runs `work` on the thread every `milliseconds` until it returns false.
    package func every(milliseconds: UInt32, _ work: @escaping @Sendable () -> Bool) {
        let box = Unmanaged.passRetained(Repeating(work)).toOpaque()
        let source = g_timeout_source_new(milliseconds)
        g_source_set_callback(source, { data in
            Unmanaged<Repeating>.fromOpaque(data!).takeUnretainedValue().body() ? 1 : 0
        }, box, { data in
            Unmanaged<Repeating>.fromOpaque(data!).release()
        })
        g_source_attach(source, context)
        g_source_unref(source)
    }

    private final class Repeating {
        let body: @Sendable () -> Bool
        init(_ body: @escaping @Sendable () -> Bool) { self.body = body }
    }

    package func stop() {
        g_main_loop_quit(loop)
    }
}
