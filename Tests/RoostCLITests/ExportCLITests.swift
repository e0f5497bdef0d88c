import Foundation
import Testing

@Suite struct ExportCLITests {
    @Test func jsonlToStandardOutput() throws {
        let sandbox = try ExportCLISandbox()
        try sandbox.fillArchive()
        let run = try sandbox.roost(["export", "--format", "jsonl", "--include", "states,presence"])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.count == 5 + 1 + 1, "messages (the correction is inside its message), a chat state, a presence")
        #expect(lines.allSatisfy { $0.hasPrefix("{\"version\":1,") })
        #expect(run.stdout.contains("\"body\":\"<script>alert(1)</script>\""))
        #expect(run.stderr.contains("exported 5 messages (+ 1 chat state, 1 presence change)"), "\(run.stderr)")
        let txt = try sandbox.roost(["export", "--format", "txt"])
        #expect(txt.stderr.contains("exported 5 messages from 3 conversations"), "\(txt.stderr)")
        #expect(!run.stderr.contains("\r"), "no progress bar when stderr is not a terminal")
    }

    @Test func queryAccountAndFormatsToFiles() throws {
        let sandbox = try ExportCLISandbox()
        try sandbox.fillArchive()
        let txt = try sandbox.roost(["export", "--format", "txt", "--utc", "-o", "alice.txt", "with:alice@example.com"])
        #expect(txt.status == 0, "\(txt.stderr)")
        #expect(try sandbox.contents("alice.txt").contains("2026-01-15 12:00:00  alice@example.com: hello there"))
        #expect(try !sandbox.contents("alice.txt").contains("你好"))
        let work = try sandbox.roost(["--account", "work@example.net", "export", "--format", "csv"])
        #expect(work.status == 0)
        #expect(work.stdout.contains("work only") && !work.stdout.contains("hello"))
        let html = try sandbox.roost(["export", "--format", "html", "--output", "site", "--utc", "--json"])
        #expect(html.status == 0, "\(html.stderr)")
        #expect(html.stdout.contains("\"format\":\"html\"") && html.stdout.contains("\"messages\":5"))
        #expect(sandbox.exists("site/index.html") && sandbox.exists("site/me@example.org/alice@example.com.html"))
        let split = try sandbox.roost(["export", "-f", "md", "--split", "month", "-o", "months"])
        #expect(split.status == 0)
        #expect(sandbox.exists("months/2026-01.md"))
        let maildir = try sandbox.roost(["export", "-f", "maildir", "--split", "conversation", "-o", "mail", "--account", "me@example.org"])
        #expect(maildir.status == 0, "\(maildir.stderr)")
        #expect(sandbox.exists("mail/wang@example.cn/cur") && !sandbox.exists("mail/boss@example.net"))
    }

    @Test func usageMistakesExitTwo() throws {
        let sandbox = try ExportCLISandbox()
        try sandbox.fillArchive()
        let noFormat = try sandbox.roost(["export"])
        #expect(noFormat.status == 2 && noFormat.stderr.contains("missing --format"))
        let folder = try sandbox.roost(["export", "--format", "html"])
        #expect(folder.status == 2 && folder.stderr.contains("give --output FOLDER"))
        let stream = try sandbox.roost(["export", "--format", "maildir", "-o", "-"])
        #expect(stream.status == 2 && stream.stderr.contains("cannot go to standard output"))
        let include = try sandbox.roost(["export", "--format", "jsonl", "--include", "typing"])
        #expect(include.status == 2 && include.stderr.contains("--include"))
        let query = try sandbox.roost(["export", "--format", "jsonl", "date:2026-13-45"])
        #expect(query.status == 2 && query.stderr.contains("invalid query"), "\(query.stderr)")
        let nothing = try sandbox.roost(["export", "--format", "jsonl", "zebra"])
        #expect(nothing.status == 1 && nothing.stderr.contains("nothing matched"))
    }

    @Test func refusesToOverwriteWithoutForce() throws {
        let sandbox = try ExportCLISandbox()
        try sandbox.fillArchive()
        try "keep me".write(toFile: sandbox.folder + "/out.jsonl", atomically: true, encoding: .utf8)
        let refused = try sandbox.roost(["export", "--format", "jsonl", "-o", "out.jsonl"])
        #expect(refused.status == 2 && refused.stderr.contains("already exists") && refused.stderr.contains("--force"))
        #expect(try sandbox.contents("out.jsonl") == "keep me")
        let forced = try sandbox.roost(["export", "--format", "jsonl", "-o", "out.jsonl", "--force"])
        #expect(forced.status == 0)
        #expect(try sandbox.contents("out.jsonl").hasPrefix("{\"version\":1"))
        #expect(try sandbox.leftovers() == ["out.jsonl"])
    }

    @Test func unwritablePathsAndFullDisksFailClearly() throws {
        let sandbox = try ExportCLISandbox()
        try sandbox.fillArchive()
        try "a file".write(toFile: sandbox.folder + "/notafolder", atomically: true, encoding: .utf8)
        let blocked = try sandbox.roost(["export", "--format", "txt", "-o", "notafolder/out.txt"])
        #expect(blocked.status == 70)
        #expect(blocked.stderr.contains("notafolder") && blocked.stderr.contains("not a folder"), "\(blocked.stderr)")

        let full = try #require(FileHandle(forWritingAtPath: "/dev/full"))
        let disk = try sandbox.roost(["export", "--format", "jsonl"], stdout: full)
        #expect(disk.status == 70)
        #expect(disk.stderr.contains("No space left on device") && disk.stderr.contains("disk is full"), "\(disk.stderr)")

        // A file size limit makes writes fail half-way: nothing may remain under the final name, nor beside it.
        // (The limit must leave room for SQLite's 32 KiB shared-memory file; the export is far larger.)
        try sandbox.fillArchive(bulk: 2_000)
        let limited = try sandbox.roost(["export", "--format", "jsonl", "-o", "big.jsonl"], shell: "ulimit -f 256; exec")
        #expect(limited.status == 70, "\(limited.stderr)")
        #expect(limited.stderr.contains("big.jsonl") && limited.stderr.contains("File too large"), "\(limited.stderr)")
        #expect(try sandbox.leftovers() == ["notafolder"])
    }

    @Test func progressOnlyOnATerminal() throws {
        let sandbox = try ExportCLISandbox()
        try sandbox.fillArchive()
        // `script` gives the command a pseudo-terminal; the progress line is drawn and then erased.
        let command = "\(ExportCLISandbox.binary) --config \(sandbox.config) export --format jsonl -o tty.jsonl"
        let run = try sandbox.roost([], shell: "exec script -qec '\(command)' /dev/null; true")
        #expect(run.stdout.contains("5/5 messages") && run.stdout.contains("\u{1B}[K"), "\(run.stdout.debugDescription)")
        #expect(sandbox.exists("tty.jsonl"))
    }

    @Test func importRoundTripThroughTheBinary() throws {
        let source = try ExportCLISandbox()
        try source.fillArchive()
        let first = try source.roost(["export", "--format", "jsonl", "--include", "all", "-o", "backup.jsonl"])
        #expect(first.status == 0)
        let target = try ExportCLISandbox()
        let imported = try target.roost(["import", source.folder + "/backup.jsonl"])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.contains("imported 5 new messages, 1 correction;"), "\(imported.stdout)")
        let again = try target.roost(["export", "--format", "jsonl", "--include", "all"])
        #expect(again.stdout == (try source.contents("backup.jsonl")))
        let twice = try target.roost(["import", "--json", source.folder + "/backup.jsonl"])
        #expect(twice.status == 0 && twice.stdout.contains("\"messages\":0"), "\(twice.stdout)")
    }

    @Test func importReportsInvalidLinesAndCommitsNothing() throws {
        let sandbox = try ExportCLISandbox()
        let file = sandbox.folder + "/broken.jsonl"
        try """
            {"version":1,"event":"presence","account":"me@example.org","contact":"a@example.com","availability":"available","timestamp":"2026-01-15T12:00:00Z"}
            {"version":1,"event":"message"
            {"version":1,"event":"presence","account":"me@example.org","contact":"a@example.com","availability":"away","timestamp":"2026-01-15T12:00:00Z"}

            """.write(toFile: file, atomically: true, encoding: .utf8)
        let run = try sandbox.roost(["import", "--format", "jsonl", file])
        #expect(run.status == 1)
        #expect(run.stderr.contains("line 2: not JSON") && run.stderr.contains("line 3: \"availability\""), "\(run.stderr)")
        #expect(run.stderr.contains("nothing was imported"))
        #expect(!sandbox.exists("archive.sqlite"))
        let skipped = try sandbox.roost(["import", "--skip-invalid", file])
        #expect(skipped.status == 0)
        #expect(skipped.stderr.contains("skipped line 2") && skipped.stdout.contains("1 presence change from"), "\(skipped.stdout)")
        let missing = try sandbox.roost(["import", "nope.jsonl"])
        #expect(missing.status == 1 && missing.stderr.contains("cannot read nope.jsonl"))
    }
}
