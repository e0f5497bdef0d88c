import Foundation
import RoostArchive
import RoostSynthetic
#if canImport(Glibc)
import Glibc
#endif

/// `roost-bench export [--messages N] [--small N] [--folder DIR] [--reuse]`: builds synthetic archives (or
/// reuses them), exports every message as jsonl with the `roost` binary built next to this one, and prints
/// its MB/s next to `sqlite3 -json` dumping the same rows in the same run, the peak RSS of the export at the
/// small and the large size (read with wait4), and the import rate of the exported file.
/// Build both in release first: `swift build -c release --product roost && swift build -c release --product roost-bench`.
enum ExportBench {
    struct Child {
        var seconds: Double
        var maxRSSKiB: Int
        var status: Int32
    }

    static func run(_ arguments: [String]) throws {
        var large = 1_000_000
        var small = 10_000
        var folder = NSTemporaryDirectory() + "roost-bench-export"
        var reuse = false
        var index = 0
        while index < arguments.count {
            switch arguments[index] {
            case "--messages": index += 1; large = Int(arguments[index]) ?? large
            case "--small": index += 1; small = Int(arguments[index]) ?? small
            case "--folder": index += 1; folder = arguments[index]
            case "--reuse": reuse = true
            default: throw BenchUsage(text: "unknown option \(arguments[index]); options: --messages N --small N --folder DIR --reuse")
            }
            index += 1
        }
        let roost = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("roost").path
        guard FileManager.default.isExecutableFile(atPath: roost) else {
            throw BenchUsage(text: "no roost binary at \(roost); build it in the same configuration first")
        }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        print("roost-bench export: \(small) and \(large) synthetic messages in \(folder)")
        var rows: [String] = []
        for count in [small, large] {
            let archive = "\(folder)/archive-\(count).sqlite"
            if !(reuse && FileManager.default.fileExists(atPath: archive)) {
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: archive + suffix) }
                print("building \(count) messages ...")
                let report = try SyntheticArchive.build(at: archive, messages: count)
                print(String(format: "  built in %.1f s (%.0f messages/s)", report.seconds, report.messagesPerSecond))
            }
            rows.append(try measure(count: count, archive: archive, folder: folder, roost: roost))
        }
        print("")
        print("messages   export MB/s  sqlite3 -json MB/s  ratio  export msg/s  peak RSS  import msg/s")
        rows.forEach { print($0) }
    }

    private static func measure(count: Int, archive: String, folder: String, roost: String) throws -> String {
        let config = "\(folder)/config-\(count).ini"
        try "[archive]\npath = \(archive)\n".write(toFile: config, atomically: true, encoding: .utf8)
        chmod(config, 0o600)
        let exported = "\(folder)/export-\(count).jsonl"
        let export = try spawn([roost, "--config", config, "-q", "export", "--format", "jsonl", "--force", "-o", exported], stdout: "/dev/null")
        guard export.status == 0 else { throw BenchUsage(text: "roost export failed with status \(export.status)") }
        let exportBytes = fileSize(exported)

        let dumped = "\(folder)/sqlite3-\(count).json"
        guard let sqlite3 = ["/usr/bin/sqlite3", "/bin/sqlite3"].first(where: FileManager.default.isExecutableFile(atPath:)) else {
            throw BenchUsage(text: "sqlite3 is not installed (apt-get install sqlite3)")
        }
        let dump = try spawn([sqlite3, "-json", "-readonly", archive, "SELECT * FROM messages ORDER BY id"], stdout: dumped)
        guard dump.status == 0 else { throw BenchUsage(text: "sqlite3 failed with status \(dump.status)") }
        let dumpBytes = fileSize(dumped)

        let importConfig = "\(folder)/config-import-\(count).ini"
        let imported = "\(folder)/imported-\(count).sqlite"
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: imported + suffix) }
        try "[archive]\npath = \(imported)\n".write(toFile: importConfig, atomically: true, encoding: .utf8)
        chmod(importConfig, 0o600)
        let load = try spawn([roost, "--config", importConfig, "-q", "import", exported], stdout: "/dev/null")
        guard load.status == 0 else { throw BenchUsage(text: "roost import failed with status \(load.status)") }

        let exportRate = Double(exportBytes) / 1_048_576 / export.seconds
        let dumpRate = Double(dumpBytes) / 1_048_576 / dump.seconds
        print(String(format: "  %d: export %.1f MB in %.2f s, sqlite3 -json %.1f MB in %.2f s, import %.2f s, peak RSS %.1f MiB",
                     count, Double(exportBytes) / 1_048_576, export.seconds, Double(dumpBytes) / 1_048_576, dump.seconds,
                     load.seconds, Double(export.maxRSSKiB) / 1024))
        for path in [dumped, imported, imported + "-wal", imported + "-shm"] { try? FileManager.default.removeItem(atPath: path) }
        return String(format: "%-10d %11.1f  %18.1f  %5.2f  %12.0f  %6.1f MiB  %11.0f", count, exportRate, dumpRate,
                      exportRate / dumpRate, Double(count) / export.seconds, Double(export.maxRSSKiB) / 1024,
                      Double(count) / load.seconds)
    }

    private static func fileSize(_ path: String) -> Int64 {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.int64Value ?? 0
    }

    /// Runs a program with stdout to a file, and reads its own peak RSS from wait4 (not the bench's).
    private static func spawn(_ arguments: [String], stdout: String) throws -> Child {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let started = Date()
        let rc = posix_spawn(&pid, arguments[0], &actions, nil, argv, environ)
        guard rc == 0 else { throw BenchUsage(text: "cannot run \(arguments[0]): \(String(cString: strerror(rc)))") }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        let seconds = Date().timeIntervalSince(started)
        let exitStatus = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return Child(seconds: seconds, maxRSSKiB: usage.ru_maxrss, status: exitStatus)
    }
}
