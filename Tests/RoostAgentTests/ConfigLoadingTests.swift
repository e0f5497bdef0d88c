import Foundation
import Testing
@testable import RoostAgent

@Suite("Config loading")
struct ConfigLoadingTests {
    @Test func missingDefaultFileMeansNoAccountsAndDefaults() throws {
        let sandbox = try ConfigSandbox()
        let config = try RoostConfig.load(explicitPath: nil, environment: sandbox.environment)
        #expect(config.accounts.isEmpty)
        #expect(config.sourcePath == nil)
        #expect(config.archivePath == sandbox.home + "/.local/share/roost/archive.sqlite")
        #expect(config.maxStanzaBytes == 1_048_576)
        #expect(config.logLevel == nil)
    }

    @Test func archiveDefaultFollowsXDGDataHomeAndIgnoresRelativeValues() throws {
        let sandbox = try ConfigSandbox()
        var environment = sandbox.environment
        environment["XDG_DATA_HOME"] = "/srv/data"
        #expect(try RoostConfig.load(explicitPath: nil, environment: environment).archivePath == "/srv/data/roost/archive.sqlite")
        environment["XDG_DATA_HOME"] = "relative/data"
        #expect(try RoostConfig.load(explicitPath: nil, environment: environment).archivePath
            == sandbox.home + "/.local/share/roost/archive.sqlite")
    }

    @Test func resolutionOrderIsFlagThenEnvironmentThenXDGThenHome() throws {
        let sandbox = try ConfigSandbox()
        let account = "[account a@example.org]\npassword_command = true\n"
        let fromHome = try sandbox.write(account, to: ".config/roost/config.ini")
        let fromXDG = try sandbox.write(account, to: "xdg/roost/config.ini")
        let fromVariable = try sandbox.write(account, to: "variable.ini")
        let fromFlag = try sandbox.write(account, to: "flag.ini")

        var environment = sandbox.environment
        #expect(try RoostConfig.load(explicitPath: nil, environment: environment).sourcePath == fromHome)
        environment["XDG_CONFIG_HOME"] = sandbox.home + "/xdg"
        #expect(try RoostConfig.load(explicitPath: nil, environment: environment).sourcePath == fromXDG)
        environment["ROOST_CONFIG"] = fromVariable
        #expect(try RoostConfig.load(explicitPath: nil, environment: environment).sourcePath == fromVariable)
        #expect(try RoostConfig.load(explicitPath: fromFlag, environment: environment).sourcePath == fromFlag)
        #expect(RoostConfig.searchedPath(explicitPath: fromFlag, environment: environment) == fromFlag)
    }

    @Test func explicitlyNamedMissingFileIsAnError() throws {
        let sandbox = try ConfigSandbox()
        let missing = sandbox.home + "/nope.ini"
        #expect(throws: ConfigError.fileNotFound(path: missing, origin: "--config")) {
            try RoostConfig.load(explicitPath: missing, environment: sandbox.environment)
        }
        var environment = sandbox.environment
        environment["ROOST_CONFIG"] = missing
        #expect(throws: ConfigError.fileNotFound(path: missing, origin: "$ROOST_CONFIG")) {
            try RoostConfig.load(explicitPath: nil, environment: environment)
        }
    }

    @Test func everyKeyIsRead() throws {
        let sandbox = try ConfigSandbox()
        let caFile = try sandbox.write(ConfigSandbox.certificatePEM, to: "private-ca.pem")
        let config = try sandbox.load("""
            # a comment
            [general]
            log_level = debug
            max_stanza_bytes = 65536

            [archive]
            path = ~/chats/archive.sqlite

            [account Alice@Example.org]
            password = s3cret \\\\ with backslash
            host = xmpp.example.org
            port = 5223
            tls = direct
            ca_file = \(caFile)
            fingerprint = AB:cd:01:23:45:67:89:ab:cd:ef:01:23:45:67:89:ab:cd:ef:01:23:45:67:89:ab:cd:ef:01:23:45:67:89:ab
            resource = laptop
            priority = 10
            enabled = false
            """)
        #expect(config.logLevel == .debug)
        #expect(config.maxStanzaBytes == 65536)
        #expect(config.archivePath == sandbox.home + "/chats/archive.sqlite")
        let account = try #require(config.accounts.first)
        #expect(account.jid == "alice@example.org")
        #expect(account.password == .literal("s3cret \\ with backslash"))
        #expect(account.host == "xmpp.example.org")
        #expect(account.port == 5223)
        #expect(account.tls == .direct)
        #expect(account.caFile == caFile)
        #expect(account.fingerprint == "abcd0123456789abcdef0123456789abcdef0123456789abcdef0123456789ab")
        #expect(account.resource == "laptop")
        #expect(account.priority == 10)
        #expect(account.enabled == false)
        #expect(config.enabledAccounts.isEmpty)
        #expect(config.account("ALICE@example.org") != nil)
        #expect(config.locations.line(group: "account Alice@Example.org", key: "port") == 12)
    }

    @Test func accountDefaults() throws {
        let sandbox = try ConfigSandbox()
        let config = try sandbox.load("[account bob@example.net]\npassword_command = echo pw\n")
        let account = try #require(config.accounts.first)
        #expect(account.password == .command("echo pw"))
        #expect(account.host == nil)
        #expect(account.port == nil)
        #expect(account.tls == .starttls)
        #expect(account.resource == "roost")
        #expect(account.priority == -1)
        #expect(account.enabled)
    }

    @Test func notifyAndSinkGroupsAreKeptRaw() throws {
        let sandbox = try ConfigSandbox()
        let config = try sandbox.load("""
            [notify]
            quiet_hours = 22:00-07:00
            when = always

            [sink desktop]
            type = desktop

            [sink hook]
            type = webhook
            url = https://example.org/hook
            """)
        #expect(config.notify == ["quiet_hours": "22:00-07:00", "when": "always"])
        #expect(config.sinks == ["desktop": ["type": "desktop"], "hook": ["type": "webhook", "url": "https://example.org/hook"]])
        let problem = config.locations.problem(group: "sink hook", key: "url", message: "bad URL")
        #expect(problem.description.hasSuffix("config.ini:10: url: bad URL"))
    }

    @Test func exampleConfigLoadsAndDocumentsEveryKey() throws {
        let example = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("config/roost.example.ini").path
        let text = try String(contentsOfFile: example, encoding: .utf8)
        let sandbox = try ConfigSandbox()
        let config = try sandbox.load(text)
        #expect(config.accounts.map(\.jid) == ["alice@example.org"])
        let keys = Array(ConfigKeys.general.keys) + Array(ConfigKeys.archive.keys) + Array(ConfigKeys.account.keys)
        for key in keys {
            #expect(text.contains("\n\(key) =") || text.contains("\n#\(key) ="), "example does not document \(key)")
        }
        for group in ["[general]", "[archive]", "[account ", "[notify]", "[sink ", "[retention]"] {
            #expect(text.contains(group))
        }
    }
}

/// `[retention]` (issue 34, 4): its rules, the per-conversation ages kept apart from the default.
@Suite struct RetentionConfigTests {
    @Test func rulesKeepEachConversationToItsOwnAge() throws {
        let config = try ConfigSandbox().load("""
            [retention]
            keep = 90d
            contact.Bob@Example.org = 1Y
            contact.lounge@conference.example.org = forever

            [account alice@example.org]
            password = x
            """).retention
        let forever: String? = nil
        #expect(config.keep == "90d" && config.overrides == ["bob@example.org": "1y", "lounge@conference.example.org": forever])
        #expect(config.rules.map(\.text) == ["contact.bob@example.org = 1y", "keep = 90d"])
        #expect(config.rules.last?.excluding == ["bob@example.org", "lounge@conference.example.org"])
        let now = Date(timeIntervalSince1970: 1_780_000_000)
        let cutoff = config.rules.last?.cutoff(now: now) ?? 0
        #expect(cutoff == 1_780_000_000_000 - 90 * 86_400_000, "\(cutoff)")
        #expect(!RetentionConfig().removesAnything && !RetentionConfig(overrides: ["a@b.c": forever]).removesAnything)
    }
}

/// `[backup]` scheduled backups (issue 34, 1): `every`, `keep`, `path`, `encrypt`, and what each refuses.
@Suite struct ScheduledBackupConfigTests {
    @Test func keysAndDefaults() throws {
        let sandbox = try ConfigSandbox()
        let account = "\n[account alice@example.org]\npassword = x\n"
        let unset = try sandbox.load(account).backup
        #expect(unset.every == nil && unset.keep == 7 && unset.path == nil && !unset.encrypt)
        #expect(unset.folder(archivePath: "/data/roost/archive.sqlite") == "/data/roost/backups")
        let set = try sandbox.load("""
            [backup]
            every = 12h
            keep = 3
            path = ~/backups
            encrypt = true
            backup_key_command = echo phrase
            """ + account).backup
        #expect(set.every == 12 * 3600 && set.keep == 3 && set.path == sandbox.home + "/backups" && set.encrypt)
        #expect(set.folder(archivePath: "/data/roost/archive.sqlite") == sandbox.home + "/backups")
        for (written, seconds) in [("30s", 30), ("15min", 900), ("1d", 86_400), ("2W", 2 * 604_800)] {
            #expect(try sandbox.load("[backup]\nevery = \(written)\n" + account).backup.every == seconds, "\(written)")
        }
    }

    @Test func refusals() throws {
        let sandbox = try ConfigSandbox()
        let account = "\n[account alice@example.org]\npassword = x\n"
        for every in ["0d", "1m", "12", "d", "-1h", "soon"] {
            let problems = sandbox.problems("[backup]\nevery = \(every)\n" + account)
            #expect(problems.map(\.key) == ["every"] && problems.first?.message.contains("30s, 15min, 12h, 1d or 1w") == true,
                    "\(every): \(problems)")
        }
        #expect(sandbox.problems("[backup]\nkeep = 0\n" + account).map(\.key) == ["keep"])
        #expect(sandbox.problems("[backup]\npath = backups\n" + account).map(\.key) == ["path"])
        #expect(sandbox.problems("[backup]\nencrypt = perhaps\n" + account).map(\.key) == ["encrypt"])
        let noCommand = sandbox.problems("[backup]\nevery = 1d\nencrypt = true\n" + account)
        #expect(noCommand.map(\.key) == ["encrypt"] && noCommand.first?.message.contains("needs backup_key_command") == true, "\(noCommand)")
    }

    @Test func namesOfScheduledBackups() {
        let name = ScheduledBackups.name(at: 1_780_000_000_000)
        #expect(name == "roost-20260528-202640.backup")
        #expect(ScheduledBackups.isScheduled(name))
        for other in ["roost.backup", "roost-20260528-202640.backup.tmp-1-2", "roost-2026052a-202640.backup", "mine-20260528-202640.backup"] {
            #expect(!ScheduledBackups.isScheduled(other), "\(other)")
        }
    }
}
