import Foundation

/// Core dumps of programs the suite runs: on for every child (the soft limit raised to the hard one, once; the
/// test script sets `ulimit -c unlimited`), and when one crashes its core is found where the kernel wrote it
/// (`/proc/sys/kernel/core_pattern`: a file pattern, relative to the program's working folder; or, piped to a
/// handler, through `coredumpctl` when there is one), its every thread's stack read with gdb for the failure, and
/// the core moved to `ROOST_TEST_CORE_DIR` (else removed). Swift's own crash backtracer is switched off for the
/// programs (`SWIFT_BACKTRACE=enable=no`): it was seen leaving a process alive after SIGABRT, and gdb on the core
/// says more.
public enum CoreDumps {
    private static let enabled: Void = {
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_CORE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            setrlimit(Int32(RLIMIT_CORE.rawValue), &limit)
        }
    }()

    /// Core dumps on for the children this process starts from now on.
    public static func enable() { _ = enabled }

    /// What a child's environment gets: no Swift backtracer (the core and gdb tell instead).
    static let environment = ["SWIFT_BACKTRACE": "enable=no"]

    /// Every thread's stack from the core that `program` (process `pid`, working in `directory`) left, or why there
    /// is none.
    static func backtrace(pid: pid_t, program: String, directory: String) -> String {
        guard let core = find(pid: pid, program: program, directory: directory) else {
            var limit = rlimit()
            getrlimit(Int32(RLIMIT_CORE.rawValue), &limit)
            return "(no core dump found: core_pattern is '\(pattern)', core size limit \(limit.rlim_cur == rlim_t.max ? "unlimited" : String(limit.rlim_cur)))"
        }
        defer { keep(core, pid: pid) }
        let gdb: RoostBinary.Result
        do {
            gdb = try RoostBinary.runProgram("/usr/bin/gdb", ["-nx", "-batch", "-iex", "set complaints 0", "-ex", "info threads",
                                                            "-ex", "thread apply all bt 40", program, core], timeout: 120)
        } catch {
            return "(core at \(core); gdb could not be run: \(error))"
        }
        let lines = gdb.stdout.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.hasPrefix("[New LWP") && !$0.hasPrefix("[Thread debugging") && !$0.hasPrefix("Using host libthread_db") }
        return "backtrace (gdb, core of pid \(pid)):\n" + lines.joined(separator: "\n")
    }

    static var pattern: String {
        ((try? String(contentsOfFile: "/proc/sys/kernel/core_pattern", encoding: .utf8)) ?? "core")
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Where the kernel wrote the core of `pid`, if anywhere this process can read.
    private static func find(pid: pid_t, program: String, directory: String) -> String? {
        let pattern = self.pattern
        if pattern.hasPrefix("|") {
            // Piped to a handler (systemd-coredump, apport): only coredumpctl can give it back.
            guard FileManager.default.isExecutableFile(atPath: "/usr/bin/coredumpctl") else { return nil }
            let out = NSTemporaryDirectory() + "roost-core-\(pid)"
            for _ in 0..<20 {
                if let result = try? RoostBinary.runProgram("/usr/bin/coredumpctl", ["dump", "\(pid)", "--output=\(out)"], timeout: 30),
                   result.status == 0, FileManager.default.fileExists(atPath: out) { return out }
                usleep(250_000)
            }
            return nil
        }
        let usesPID = ((try? String(contentsOfFile: "/proc/sys/kernel/core_uses_pid", encoding: .utf8)) ?? "0").hasPrefix("1")
        let name = String((program as NSString).lastPathComponent.prefix(15))
        var expanded = ""
        var wildcard = false
        var iterator = pattern.makeIterator()
        while let character = iterator.next() {
            guard character == "%" else {
                expanded.append(character)
                continue
            }
            switch iterator.next() {
            case "%": expanded.append("%")
            case "p", "P", "i", "I": expanded += "\(pid)"
            case "e": expanded += name
            case "u": expanded += "\(getuid())"
            case "g": expanded += "\(getgid())"
            case "h": expanded += ProcessInfo.processInfo.hostName
            default:
                expanded.append("*")
                wildcard = true
            }
        }
        if usesPID && !pattern.contains("%p") { expanded += ".\(pid)" }
        let path = expanded.hasPrefix("/") ? expanded : directory + "/" + expanded
        guard wildcard else { return FileManager.default.fileExists(atPath: path) ? path : nil }
        // A time or signal in the name: the newest file that fits.
        let folder = (path as NSString).deletingLastPathComponent
        let shape = (path as NSString).lastPathComponent
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { fnmatch(shape, $0, 0) == 0 }.map { folder + "/" + $0 }
            .max { (modified($0) ?? .distantPast) < (modified($1) ?? .distantPast) }
    }

    private static func modified(_ path: String) -> Date? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
    }

    /// Moves the core to `ROOST_TEST_CORE_DIR` for a closer look, or removes it.
    private static func keep(_ core: String, pid: pid_t) {
        if let folder = ProcessInfo.processInfo.environment["ROOST_TEST_CORE_DIR"], !folder.isEmpty {
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let target = folder + "/core.\(pid)"
            try? FileManager.default.removeItem(atPath: target)
            if (try? FileManager.default.moveItem(atPath: core, toPath: target)) != nil { return }
        }
        try? FileManager.default.removeItem(atPath: core)
    }
}
