import Foundation
import Testing
@testable import RoostAgent

@Suite("Config validation")
struct ConfigValidationTests {
    @Test func unknownKeyIsReportedWithFileAndLine() throws {
        let sandbox = try ConfigSandbox()
        let problems = sandbox.problems("""
            [general]
            log_level = info

            [account a@example.org]
            password_command = true
            colour = blue
            """)
        #expect(problems.count == 1)
        let description = try #require(problems.first).description
        #expect(description.hasPrefix(sandbox.home + "/config.ini:6: colour: unknown key in [account a@example.org]"))
        #expect(description.contains("known keys:"))
    }

    @Test func unknownGroupIsReportedWithLine() throws {
        let sandbox = try ConfigSandbox()
        let problems = sandbox.problems("[general]\n\n[acount a@example.org]\npassword = x\n")
        #expect(problems.map(\.line) == [3])
        #expect(problems.first?.message.contains("unknown group [acount a@example.org]") == true)
    }

    @Test func invalidValuesAreAllReportedInLineOrder() throws {
        let sandbox = try ConfigSandbox()
        let problems = sandbox.problems("""
            [account a@example.org]
            password_command = true
            tls = ssl
            port = 70000
            priority = 200
            enabled = perhaps
            fingerprint = 12:34
            [general]
            log_level = loud
            max_stanza_bytes = -1
            """)
        #expect(problems.map(\.line) == [3, 4, 5, 6, 7, 9, 10])
        #expect(problems.map(\.key) == ["tls", "port", "priority", "enabled", "fingerprint", "log_level", "max_stanza_bytes"])
        #expect(problems[0].message == "expected one of starttls, direct, got 'ssl'")
        #expect(problems[1].message == "expected a port number from 1 to 65535, got '70000'")
        #expect(problems[2].message == "expected a priority from -128 to 127, got '200'")
        #expect(problems[4].message.contains("32 bytes"))
        #expect(problems[1].description == sandbox.home + "/config.ini:4: port: expected a port number from 1 to 65535, got '70000'")
    }

    /// Mistyped keys and groups get "did you mean", from the suggestion code `roost` uses for commands and search
    /// filters; `contact.bob` (a name, not an address) is refused, since it would never match (issue 30, 6).
    @Test func typosAreSuggestedAndContactKeysNeedAnAddress() throws {
        let sandbox = try ConfigSandbox()
        let problems = sandbox.problems("""
            [acount a@example.org]
            [general]
            log_levl = debug
            [notify]
            quiet_hour = 22:00-07:00
            contact.bob = always
            contacts.carol@example.org = never
            contact.dave@example.org = always
            """)
        let messages = problems.map { "\($0.line ?? 0) \($0.key ?? "-"): \($0.message)" }
        try #require(problems.map(\.line) == [1, 3, 5, 6, 7], "\(messages)")
        #expect(messages[0].contains("(did you mean [account a@example.org]?)"), "\(messages)")
        #expect(messages[1].contains("log_levl: unknown key in [general] (did you mean `log_level`?)"), "\(messages)")
        #expect(messages[2].contains("quiet_hour: unknown key (did you mean `quiet_hours`?)"), "\(messages)")
        #expect(messages[3].contains("contact.bob: 'bob' is not a JID"), "\(messages)")
        #expect(messages[4].contains("(did you mean `contact.carol@example.org`?)"), "\(messages)")
    }

    @Test func errorDescriptionListsEveryProblem() throws {
        let sandbox = try ConfigSandbox()
        do {
            _ = try sandbox.load("[general]\nlog_level = x\nbogus = 1\n")
            Issue.record("expected an error")
        } catch {
            let text = error.description
            #expect(text.contains("(2 problems)"))
            #expect(text.contains("config.ini:2: log_level:"))
            #expect(text.contains("config.ini:3: bogus: unknown key"))
        }
    }

    @Test func syntaxErrorsNeverQuoteTheLine() throws {
        let sandbox = try ConfigSandbox()
        let problems = sandbox.problems("password = early\n[account a@example.org]\npassword hunter2\n[broken\n")
        #expect(problems.map(\.line) == [1, 3, 4])
        for problem in problems {
            #expect(!problem.description.contains("hunter2"))
            #expect(!problem.description.contains("early"))
        }
    }

    @Test func windowsLineEndsKeepLineNumbersAndValuesClean() throws {
        let sandbox = try ConfigSandbox()
        #expect(sandbox.problems("[general]\r\n\r\nlog_level = loud\r\n").map(\.line) == [3])
        #expect(try sandbox.load("[general]\r\nlog_level = debug\r\n").logLevel == .debug)
    }

    @Test func duplicateKeysAndGroupsAreErrors() throws {
        let sandbox = try ConfigSandbox()
        let problems = sandbox.problems("""
            [account a@example.org]
            password_command = true
            port = 5222
            port = 5223
            [account a@example.org]
            """)
        #expect(problems.map(\.line) == [4, 5])
        #expect(problems[0].message.contains("first at line 3"))
        #expect(problems[1].message.contains("already started at line 1"))
    }

    @Test func accountNeedsExactlyOnePasswordSource() throws {
        let sandbox = try ConfigSandbox()
        let neither = sandbox.problems("[account a@example.org]\nhost = h\n")
        #expect(neither.first?.message == "account a@example.org needs `password` or `password_command`")
        let both = sandbox.problems("[account a@example.org]\npassword = p\npassword_command = c\n")
        #expect(both.first?.message.contains("not both") == true)
        #expect(both.first?.line == 1)
    }

    @Test(arguments: ["a@example.org/phone", "example.org", "@example.org", "a@", "a b@example.org", "a@example..org"])
    func invalidAccountJIDs(jid: String) throws {
        let sandbox = try ConfigSandbox()
        let problems = sandbox.problems("[account \(jid)]\npassword_command = true\n")
        #expect(problems.count == 1)
        #expect(problems.first?.line == 1)
    }

    @Test func sameAccountTwiceAfterNormalisationIsAnError() throws {
        let sandbox = try ConfigSandbox()
        let problems = sandbox.problems("[account a@example.org]\npassword_command = true\n[account A@EXAMPLE.ORG]\npassword_command = true\n")
        #expect(problems.map(\.line) == [3])
    }

    @Test func pathsMustBeAbsoluteOrStartWithTilde() throws {
        let sandbox = try ConfigSandbox()
        #expect(sandbox.problems("[archive]\npath = data/archive.sqlite\n").map(\.key) == ["path"])
        #expect(try sandbox.load("[archive]\npath = ~/a.sqlite\n").archivePath == sandbox.home + "/a.sqlite")
    }

    /// The archive path is checked when the config is read: a directory, a file that is not SQLite, a folder no
    /// file can be made in are each refused with the key and line, saying what is there (issue 30, 7).
    @Test func archivePathMustBeAnArchiveRoostCanUse() throws {
        let sandbox = try ConfigSandbox()
        let directory = sandbox.problems("[archive]\npath = ~\n")
        #expect(directory.map(\.key) == ["path"] && directory.first?.line == 2)
        #expect(directory.first?.message.contains("is a directory") == true, "\(directory)")

        let notes = try sandbox.write("shopping list\n", to: "notes.txt")
        let text = sandbox.problems("[archive]\npath = \(notes)\n")
        #expect(text.first?.message.contains("is not an SQLite database (it is a text file of") == true, "\(text)")
        #expect(text.first?.message.contains("backup") == false)

        let proc = sandbox.problems("\n[archive]\npath = /proc/archive.sqlite\n")
        #expect(proc.first?.line == 3 && proc.first?.key == "path", "\(proc)")
        #expect(proc.first?.message.contains("/proc is not a directory Roost can write") == true, "\(proc)")

        // A file that is not there yet, in folders that are not there yet, is made by Roost; an empty file too.
        #expect(try sandbox.load("[archive]\npath = ~/new/deeper/archive.sqlite\n").archivePath == sandbox.home + "/new/deeper/archive.sqlite")
        let empty = try sandbox.write("", to: "empty.sqlite")
        #expect(try sandbox.load("[archive]\npath = \(empty)\n").archivePath == empty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.home).allSatisfy { !$0.hasPrefix(".roost-write-check") })
    }

    /// `ca_file` must be a PEM file of certificates, as TLS loads it: `roost config` refuses what `roost run` would
    /// (issue 30, 6).
    @Test func caFileMustBeLoadable() throws {
        let sandbox = try ConfigSandbox()
        let missing = sandbox.problems("[account a@example.org]\npassword_command = true\nca_file = /nonexistent.pem\n")
        #expect(missing.map(\.key) == ["ca_file"] && missing.first?.line == 3, "\(missing)")
        #expect(missing.first?.message.contains("/nonexistent.pem") == true)
        let notPEM = try sandbox.write("not a certificate\n", to: "ca.pem")
        let garbage = sandbox.problems("[account a@example.org]\npassword_command = true\nca_file = \(notPEM)\n")
        #expect(garbage.map(\.key) == ["ca_file"], "\(garbage)")
        #expect(sandbox.problems("[account a@example.org]\npassword_command = true\nca_file = ~\n").first?.message.contains("not a regular file") == true)
        let good = try sandbox.write(ConfigSandbox.certificatePEM, to: "good.pem")
        #expect(try sandbox.load("[account a@example.org]\npassword_command = true\nca_file = \(good)\n").accounts.first?.caFile == good)
    }

    @Test func groupsThatTakeNoNameRejectOne() throws {
        let sandbox = try ConfigSandbox()
        #expect(sandbox.problems("[general extra]\n").first?.message == "[general] takes no name; write it as [general]")
        #expect(sandbox.problems("[account]\n").first?.line == 1)
        #expect(sandbox.problems("[sink]\n").first?.line == 1)
    }
}

@Suite("Config: group chats")
struct ConfigRoomTests {
    @Test func roomsNickExclusionsAndRoomGroups() throws {
        let sandbox = try ConfigSandbox()
        let config = try sandbox.load("""
            [account alice@example.org]
            password = pw
            nick = Alice
            rooms = lounge@muc.example.org, Dev@MUC.example.org
            exclude_rooms = spam@muc.example.org
            accept_invitations = contacts

            [room secret@muc.example.org]
            nick = A.
            password_command = pass show rooms/secret

            [room lounge@muc.example.org]
            password = hunter2
            """)
        let account = try #require(config.accounts.first)
        #expect(account.nick == "Alice" && account.defaultNick == "Alice")
        #expect(account.rooms.map(\.jid) == ["dev@muc.example.org", "secret@muc.example.org", "lounge@muc.example.org"])
        #expect(account.rooms.first { $0.jid == "secret@muc.example.org" }?.nick == "A.")
        #expect(account.rooms.first { $0.jid == "secret@muc.example.org" }?.password == .command("pass show rooms/secret"))
        #expect(account.rooms.first { $0.jid == "lounge@muc.example.org" }?.password == .literal("hunter2"))
        #expect(account.excludedRooms == ["spam@muc.example.org"])
        #expect(account.acceptInvitations == .contacts)
        // No password ever shows up in a description.
        #expect(!"\(account.rooms)".contains("hunter2") && !"\(account.rooms)".contains("pass show"))
    }

    @Test func theDefaultNickIsTheLocalPart() throws {
        let config = try ConfigSandbox().load("[account alice@example.org]\npassword = pw\n")
        #expect(config.accounts.first?.defaultNick == "alice")
        #expect(config.accounts.first?.acceptInvitations == InvitationAcceptance.never)
    }

    @Test func aRoomOfSeveralAccountsMustNameOne() throws {
        let sandbox = try ConfigSandbox()
        do {
            _ = try sandbox.load("""
                [account alice@example.org]
                password = pw
                [account work@example.com]
                password = pw
                [room lounge@muc.example.org]
                nick = A
                [room other@muc.example.org]
                account = nobody@example.org
                [room]
                rooms = x
                """)
            Issue.record("expected problems")
        } catch {
            let text = error.description
            #expect(text.contains("name one with `account = JID`"))
            #expect(text.contains("account nobody@example.org is not configured"))
            #expect(text.contains("a room group names the room's JID"))
        }
    }

    @Test func badRoomValues() throws {
        let sandbox = try ConfigSandbox()
        do {
            _ = try sandbox.load("""
                [account alice@example.org]
                password = pw
                rooms = not-a-jid
                accept_invitations = everyone
                [room lounge@muc.example.org]
                password = a
                password_command = b
                """)
            Issue.record("expected problems")
        } catch {
            let text = error.description
            #expect(text.contains("rooms"))
            #expect(text.contains("accept_invitations"))
            #expect(text.contains("set either `password` or `password_command`"))
        }
    }
}
