import Foundation
import Testing
import RoostTestSupport
@testable import RoostAgent
@testable import RoostArchive

/// Issue 30, 11: when the archive is locked, the message names the process that holds the write lock — never a
/// reader (`roost serve`, `roost search`), whose read locks on the WAL index keep no writer out.
@Suite("Write failure diagnosis")
struct WriteFailureDiagnosisTests {
    /// Holds POSIX locks as SQLite does (fcntl), `how` being LOCK_SH or LOCK_EX, until killed.
    private func holder(_ path: String, _ how: String) throws -> RunningRoost {
        let script = """
            import fcntl, sys, time
            f = open(sys.argv[1], "r+b")
            fcntl.lockf(f, fcntl.\(how), 1, 120)
            sys.stderr.write("locked\\n"); sys.stderr.flush()
            time.sleep(600)
            """
        let process = try RoostBinary.startProgram("/usr/bin/python3", ["-c", script, path])
        try process.waitForLog("locked")
        return process
    }

    @Test(.requires(.tool("/usr/bin/python3"))) func onlyWriteLockHoldersAreBlamed() throws {
        try TestRequirement.check(.tool("/usr/bin/python3"))
        let folder = try TestDirectory("roost-lock-holders")
        let archive = folder.path + "/archive.sqlite"
        for file in [archive, archive + "-shm"] {
            #expect(FileManager.default.createFile(atPath: file, contents: Data(repeating: 0, count: 4096)))
        }
        let reader = try holder(archive + "-shm", "LOCK_SH")
        defer { reader.stop(signal: SIGKILL) }
        #expect(WriteFailureDiagnosis.lockHolders(of: archive).isEmpty, "a reader holds no write lock")

        let writer = try holder(archive, "LOCK_EX")
        defer { writer.stop(signal: SIGKILL) }
        let holders = WriteFailureDiagnosis.lockHolders(of: archive)
        #expect(holders.count == 1 && holders.first?.hasPrefix("PID \(writer.pid) ") == true, "\(holders)")
    }
}
