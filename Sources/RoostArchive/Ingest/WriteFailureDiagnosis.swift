import RoostCore
import Foundation
internal import CSystem

/// Turns a failed write into one sentence that says what is wrong and what to do: who holds the lock
/// (from /proc/locks), how much disk is free.
enum WriteFailureDiagnosis {
    static func describe(_ error: ArchiveError, archivePath: String) -> String {
        guard case .sqlite(let e) = error else { return error.description }
        switch e.primaryCode {
        case 5, 6:
            let holders = lockHolders(of: archivePath)
            if holders.isEmpty { return "the archive is locked by another process; stop the other writer (roost import, verify --repair, sqlite3)" }
            return "the archive is locked by \(holders.joined(separator: ", ")); let it finish or stop it"
        case 13:
            let free = freeMegabytes(archivePath)
            return "the disk holding the archive is full\(free.map { " (\($0) MB free)" } ?? ""); free some space"
        case 8:
            return "the archive cannot be written (read-only file or file system): \(e.message)"
        default:
            return "\(e.message) (SQLite error \(e.code))"
        }
    }

    /// Processes other than this one holding write locks on the archive, its WAL index or journal. Readers (`roost
    /// serve`, `roost search`, an `sqlite3` reading) hold read locks on the WAL index, and never keep a writer out.
    static func lockHolders(of path: String) -> [String] {
        var inodes: Set<String> = []
        for file in [path, path + "-shm", path + "-wal", path + "-journal"] {
            var info = stat()
            if stat(file, &info) == 0 {
                inodes.insert("\(roost_major(info.st_dev)):\(roost_minor(info.st_dev)):\(info.st_ino)".lowercased())
            }
        }
        guard !inodes.isEmpty, let locks = try? String(contentsOfFile: "/proc/locks", encoding: .utf8) else { return [] }
        var pids: [Int32] = []
        for line in locks.split(separator: "\n") {
            // "1: POSIX  ADVISORY  WRITE 1234 08:01:5678 0 EOF"
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[3] == "WRITE", let pid = Int32(fields[4]), pid != getpid() else { continue }
            let id = fields[5].split(separator: ":")
            guard id.count == 3, let maj = UInt32(id[0], radix: 16), let min = UInt32(id[1], radix: 16) else { continue }
            if inodes.contains("\(maj):\(min):\(id[2])"), !pids.contains(pid) { pids.append(pid) }
        }
        return pids.map { pid in
            let raw = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline"))) ?? Data()
            let command = raw.split(separator: 0).prefix(4).map { String(decoding: $0, as: UTF8.self) }.joined(separator: " ")
            return command.isEmpty ? "PID \(pid)" : "PID \(pid) (\(LogText.quote(command, limit: 80)))"
        }
    }

    static func freeMegabytes(_ path: String) -> Int? {
        var info = statvfs()
        guard statvfs((path as NSString).deletingLastPathComponent, &info) == 0 else { return nil }
        return Int(UInt64(info.f_bavail) * UInt64(info.f_frsize) / 1_000_000)
    }
}
