import Foundation
import RoostNotify
#if canImport(Glibc)
import Glibc
#endif

/// Long output on a terminal goes through `$PAGER` (default `less -FRX`: quits when it fits on one screen,
/// keeps colours, leaves the text on the screen), as git does; `--no-pager` or a `PAGER` of `cat` or ""
/// turn it off.
final class Pager: Sendable {
    private let pid: pid_t
    private let sink: FileDescriptorSink

    /// Starts the pager, or returns nil when it is not wanted or cannot start (output then goes straight out).
    static func start(environment: [String: String]) -> Pager? {
        let command = (environment["PAGER"] ?? "less -FRX").trimmingCharacters(in: .whitespaces)
        guard !command.isEmpty, command != "cat" else { return nil }
        var extra: [String: String] = [:]
        // `PAGER=less` on its own: the same behaviour as the default, unless the user set LESS.
        if environment["LESS"] == nil { extra["LESS"] = "FRX" }
        if environment["LV"] == nil { extra["LV"] = "-c" }
        guard let (pid, input) = ProcessRunner.startFeeding(argv: ["/bin/sh", "-c", command], extraEnvironment: extra) else {
            return nil
        }
        return Pager(pid: pid, sink: FileDescriptorSink(descriptor: input))
    }

    private init(pid: pid_t, sink: FileDescriptorSink) {
        self.pid = pid
        self.sink = sink
    }

    var output: any TextSink { sink }

    /// Ends the input and waits until the user has left the pager.
    func finish() {
        close(sink.descriptor)
        ProcessRunner.waitForExit(pid)
    }
}
