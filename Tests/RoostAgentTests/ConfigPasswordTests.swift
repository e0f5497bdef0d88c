import Foundation
import Testing
@testable import RoostAgent

@Suite("Config passwords")
struct ConfigPasswordTests {
    @Test func passwordInGroupReadableFileIsRefusedWithChmodAdvice() throws {
        let sandbox = try ConfigSandbox()
        let path = sandbox.home + "/config.ini"
        #expect(throws: ConfigError.insecurePermissions(path: path, mode: 0o100644)) {
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

    @Test func passwordCommandRunsOnlyWhenResolvedAndYieldsTheFirstLine() throws {
        let sandbox = try ConfigSandbox()
        let marker = sandbox.home + "/ran"
        let config = try sandbox.load("""
            [account a@example.org]
            password_command = touch \(marker); printf 'first line\\r\\nsecond line\\n'
            """)
        #expect(!FileManager.default.fileExists(atPath: marker), "loading must not run password_command")
        let account = try #require(config.accounts.first)
        #expect(try account.resolvePassword() == "first line")
        #expect(FileManager.default.fileExists(atPath: marker))
    }

    @Test func failingPasswordCommandNamesTheAccountButNotTheOutput() throws {
        let failing = PasswordSource.command("echo leaked-output; exit 3")
        #expect(throws: ConfigError.passwordCommandFailed(account: "a@example.org", reason: "exited with status 3")) {
            try failing.resolve(account: "a@example.org")
        }
        do {
            _ = try failing.resolve(account: "a@example.org")
        } catch {
            #expect(error.description.contains("a@example.org"))
            #expect(!error.description.contains("leaked-output"))
            #expect(!error.description.contains("echo"))
        }
    }

    @Test func passwordCommandPrintingNothingIsAnError() throws {
        #expect(throws: ConfigError.self) {
            try PasswordSource.command("printf '\\nsecond\\n'").resolve(account: "a@example.org")
        }
        #expect(throws: ConfigError.self) {
            try PasswordSource.command("true").resolve(account: "a@example.org")
        }
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
