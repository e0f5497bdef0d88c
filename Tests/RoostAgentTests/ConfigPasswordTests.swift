import Foundation
import Testing
@testable import RoostAgent

@Suite("Config passwords")
struct ConfigPasswordTests {
    @Test func passwordInGroupReadableFileIsRefusedWithChmodAdvice() throws {
        let sandbox = try ConfigSandbox()
        let path = sandbox.home + "/config.ini"
        #expect(throws: ConfigError.insecurePermissions(path: path, mode: 0o100644, key: "password", line: 2)) {
            try sandbox.load("[account a@example.org]\npassword = hunter2\n", mode: 0o644)
        }
        do {
            _ = try sandbox.load("[account a@example.org]\npassword = hunter2\n", mode: 0o620)
            Issue.record("expected a refusal")
        } catch {
            #expect(error.description.contains("chmod 600 \(path)"))
            #expect(!error.description.contains("hunter2"))
        }
    }

    @Test func privateFileWithPasswordAndSharedFileWithoutPasswordAreFine() throws {
        let sandbox = try ConfigSandbox()
        #expect(try sandbox.load("[account a@example.org]\npassword = hunter2\n", mode: 0o600).accounts.count == 1)
        #expect(try sandbox.load("[account a@example.org]\npassword_command = true\n", mode: 0o644).accounts.count == 1)
    }

    @Test func passwordCommandRunsOnlyWhenResolvedAndYieldsTheFirstLine() async throws {
        let sandbox = try ConfigSandbox()
        let marker = sandbox.home + "/ran"
        let config = try sandbox.load("""
            [account a@example.org]
            password_command = touch \(marker); printf 'first line\\r\\nsecond line\\n'
            """)
        #expect(!FileManager.default.fileExists(atPath: marker), "loading must not run password_command")
        let account = try #require(config.accounts.first)
        #expect(try await account.resolvePassword() == "first line")
        #expect(FileManager.default.fileExists(atPath: marker))
    }

    @Test func failingPasswordCommandNamesTheProgramButNotTheOutputOrArguments() async throws {
        let failing = PasswordSource.command("sh -c 'echo leaked-output; exit 3' secret-argument")
        do {
            _ = try await failing.resolve(account: "a@example.org")
            Issue.record("expected a failure")
        } catch {
            #expect(error == .passwordCommandFailed(account: "a@example.org", reason: "(`sh`) exited with status 3"))
            #expect(error.description.contains("a@example.org"))
            #expect(!error.description.contains("leaked-output"))
            #expect(!error.description.contains("secret-argument"))
        }
    }

    @Test func passwordCommandPrintingNothingIsAnError() async throws {
        await #expect(throws: ConfigError.self) {
            try await PasswordSource.command("printf '\\nsecond\\n'").resolve(account: "a@example.org")
        }
        await #expect(throws: ConfigError.self) {
            try await PasswordSource.command("true").resolve(account: "a@example.org")
        }
    }

    /// `password_command = yes` once grew the agent to 2 GB: only the first line is read.
    @Test func endlessOutputYieldsTheFirstLineWithoutGrowing() async throws {
        #expect(try await PasswordSource.command("yes").resolve(account: "a@example.org") == "y")
        let long = PasswordSource.command("head -c 200000 /dev/zero | tr '\\0' x")
        do {
            _ = try await long.resolve(account: "a@example.org")
            Issue.record("a first line over 64 KiB must be refused")
        } catch {
            #expect(error.description.contains("longer than 64 KiB"), "\(error)")
        }
    }

    /// A hung command is stopped at the deadline with everything it started (its process group), and the
    /// error says what happened.
    @Test func hungCommandIsKilledWithItsChildrenAtTheDeadline() async throws {
        let sandbox = try ConfigSandbox()
        let pidFile = sandbox.home + "/child.pid"
        let command = PasswordCommand(command: "sleep 1000 & echo $! > \(pidFile); wait", account: "a@example.org", timeout: .seconds(2))
        // It returns (rather than waiting out `sleep 1000`) with the timeout error, and the grandchild is gone:
        // the deadline acted. No wall-clock bound: on a loaded machine the 2 s may take longer to be noticed.
        do {
            _ = try await command.run()
            Issue.record("expected a timeout")
        } catch {
            #expect(error.description.contains("did not finish within 2 s"), "\(error)")
        }
        let pid = try #require(Int32(String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        // The grandchild is gone (or a zombie about to be reaped by init): kill(0) fails or /proc shows state Z. A
        // process killed a moment ago may still be exiting on a loaded machine, so this waits (30 s at most) — far
        // below the 1000 s it would live if the deadline had not acted.
        func gone() -> Bool {
            let state = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8))?.split(separator: " ").dropFirst(2).first
            return kill(pid, 0) != 0 || state == "Z"
        }
        let until = ContinuousClock.now + .seconds(30)
        while !gone() && ContinuousClock.now < until { try await Task.sleep(for: .milliseconds(50)) }
        #expect(gone(), "sleep 1000 (pid \(pid)) survived the deadline")
    }

    @Test func passwordsNeverShowInDescriptionsOrDumps() throws {
        let account = AccountConfig(jid: "a@example.org", password: .literal("hunter2"))
        var dumped = ""
        dump(account, to: &dumped)
        #expect(!dumped.contains("hunter2"))
        #expect(!String(describing: account).contains("hunter2"))
        #expect(!String(reflecting: account).contains("hunter2"))
        #expect(!"\(account.password)".contains("hunter2"))
        let command = PasswordSource.command("pass show secret-entry")
        #expect(!String(describing: command).contains("secret-entry"))
    }
}
