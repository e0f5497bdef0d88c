public import Foundation
import RoostCore
import Synchronization
internal import CSystem
#if canImport(Glibc)
import Glibc
#endif

/// `[mirror]`: a Maildir the agent keeps current while it archives. See docs/mirror.md.
public struct MirrorSettings: Sendable, Equatable {
    /// `maildir`: the mirror's top folder (made when missing).
    public var maildir: String
    /// `split`: one Maildir per conversation, per month, or one for everything.
    public var split: ExportSplit = .conversation
    /// `query`: only the messages this query (`roost search`'s language) selects.
    public var query = ""
    /// `attachments`: stored files up to this size are embedded; nil: none (the mail names the URL).
    public var attachmentLimit: Int64? = ExportOptions.defaultMailAttachmentLimit
    /// `read_from_mirror`: a mail the user marks seen (moved to `cur/` with the `S` flag) marks its conversation read
    /// up to its message.
    public var readFromMirror = false
    /// With `split = conversation`: an account folder above the conversations (when several accounts archive).
    public var accountFolders = false
    /// The calendar of `Date:` headers and month folders.
    public var timeZone: TimeZone = .current

    public init(maildir: String) {
        self.maildir = maildir
    }
}

/// What `roost status --json` shows of the mirror.
public struct MirrorStatus: Codable, Sendable, Equatable {
    /// The mirror's folder.
    public var maildir: String
    /// The change the Maildir holds everything up to (the cursor `mirror`); nil before its first pass.
    public var position: Int64?
    /// The newest change in the archive.
    public var latest: Int64
    /// Messages changed after `position`, not yet in the Maildir.
    public var backlog: Int64
    /// Mails written (and removed) since the agent started.
    public var written: Int
    public var removed: Int
    /// Why the mirror is stalled (a full disk), until a pass succeeds.
    public var stalled: String?
    /// When the batch under way (up to `MailMirrorWriter.batchSize` changes) began, in milliseconds since 1970; nil
    /// between passes. A batch takes milliseconds: one begun long ago waits on a disk that slow.
    public var writingSince: Int64?
}

public enum MirrorError: Error, Sendable, CustomStringConvertible {
    case io(path: String, operation: String, errno: Int32)
    case archive(ArchiveError)

    public var description: String {
        switch self {
        case let .io(path, operation, code): "cannot \(operation) \(path): \(String(cString: strerror(code)))"
        case let .archive(error): "\(error)"
        }
    }
}

/// Writes the mirror: the messages that changed after the cursor `mirror` (everything on the first pass) as mails,
/// each through the maildir export's `MailWriter.mail` — the bytes `roost export --format maildir` writes for it —
/// into an unnamed file in `tmp/` linked into `new/`, a batch's rows read in one statement; the earlier version of a changed message (same Message-ID, another
/// file name) is removed once its successor is in place, a message gone from the archive or the query loses its
/// file. File names are `STEM` `R<row>V<change>.roost`, the same on every run, so a pass interrupted by a crash
/// is redone over the same files; the cursor moves only after one syncfs(2) made the pass's files, names and
/// removals durable. A mail the user already moved to `cur/` under the same name is left there. Confined to one
/// thread (`MailMirror`'s, or the CLI's).
public final class MailMirrorWriter {
    public static let cursorName = "mirror"
    /// Changes read per snapshot (and per cursor move).
    static let batchSize = 500

    let settings: MirrorSettings
    let reader: ArchiveReader
    let writer: ArchiveWriter
    private let clock: ZoneClock
    /// message row → its files in `new/` and `cur/`, read from the folders once, kept since.
    private var files = MailFiles()
    /// The Maildirs (folders holding `tmp`, `new`, `cur`) made or found.
    private(set) var madeFolders: Set<String> = []
    /// Files or folders were made, renamed or removed since the mirror's filesystem was last synced.
    private var unsynced = false
    private var text: [UInt8] = []
    /// The path of the mail being delivered, `FOLDER/new/NAME`, NUL-ended (kept from one mail to the next).
    private var path: [UInt8] = []
    /// The Maildirs whose `tmp/` and `new/` the pass holds open, by their folder below the mirror's: a mail's file
    /// is made and named from these (no path walked from the top folder for each). Closed at the pass's end.
    private var openFolders: [String: OpenMaildir] = [:]
    private var lastOpened: (relative: String, maildir: OpenMaildir)?
    /// Whether a mail's unnamed file is named by its descriptor (`roost_link_descriptor`); false once that failed
    /// here (a kernel before 6.10): by its `/proc/self/fd` name.
    var descriptorLinks = true
    /// Called on this writer's thread as each batch of up to `batchSize` rows begins (the live mirror's status: a
    /// batch takes milliseconds, so one begun long ago waits on its disk; a first pass over a large archive is many).
    var batchBegins: () -> Void = {}
    /// Mails are made as unnamed files (O_TMPFILE) linked into `new/`; false once that failed here (a filesystem
    /// without it, no `/proc`; or a test): named files in `tmp/`, renamed.
    var unnamedFiles = true
    /// What the renderer keeps from one pass to the next.
    private let memory = RendererMemory()
    public private(set) var written = 0
    public private(set) var removed = 0

    public init(settings: MirrorSettings, reader: ArchiveReader, writer: ArchiveWriter) throws(MirrorError) {
        self.settings = settings
        self.reader = reader
        self.writer = writer
        clock = ZoneClock(timeZone: settings.timeZone)
        try makeFolder(settings.maildir)
        scan()
    }

    deinit {
        closeFolders()
    }

    /// Writes every change after the cursor, a batch at a time, until none is left; the mails written.
    @discardableResult
    public func catchUp() throws(MirrorError) -> Int {
        let before = written + removed
        while try pass() {}
        return written + removed - before
    }

    /// Removes every mail of the mirror and writes the archive's again (`roost mirror rebuild`).
    @discardableResult
    public func rebuild() throws(MirrorError) -> Int {
        for row in files.rows { try remove(row) }
        try syncFilesystem()
        do {
            try writer.setCursor(Self.cursorName, to: -1)
        } catch {
            throw .archive(error)
        }
        return try catchUp()
    }

    /// The row whose mail `path` is (a name this mirror wrote), and its flags (`S` seen) when in `cur/`.
    public static func row(ofMail name: String) -> (row: Int64, version: Int64, flags: String)? {
        var base = Substring(name)
        var flags = ""
        if let colon = base.firstIndex(of: ":") {
            let info = base[base.index(after: colon)...]
            if info.hasPrefix("2,") { flags = String(info.dropFirst(2)) }
            base = base[..<colon]
        }
        guard base.hasSuffix(".roost") else { return nil }
        base = base.dropLast(".roost".count)
        guard let v = base.lastIndex(of: "V"), let version = Int64(base[base.index(after: v)...]) else { return nil }
        let head = base[..<v]
        guard let r = head.lastIndex(of: "R"), let row = Int64(head[head.index(after: r)...]) else { return nil }
        return (row, version, flags)
    }

    // MARK: A pass

    /// One snapshot's work; false when there was nothing after the cursor.
    private func pass() throws(MirrorError) -> Bool {
        defer { closeFolders() }
        var failure: MirrorError?
        let position: Int64?
        do {
            position = try reader.withSnapshot(mapped: false) { database throws -> Int64? in
                do throws(MirrorError) {
                    return try pass(database)
                } catch {
                    failure = error
                    return nil
                }
            }
        } catch let error as ArchiveError {
            throw .archive(error)
        } catch {
            throw .archive(.invalidRecord("\(error)"))
        }
        if let failure { throw failure }
        guard let position else { return false }
        try syncFilesystem()
        do {
            try writer.setCursor(Self.cursorName, to: position)
        } catch {
            throw .archive(error)
        }
        return true
    }

    /// Writes a batch; the position it reached, nil when nothing was after the cursor.
    private func pass(_ database: Database) throws(MirrorError) -> Int64? {
        // Most wake-ups after the first pass find a few changes, or none (the mirror's own cursor commit wakes it):
        // nothing more is read then.
        let (cursor, latest) = try Self.sqlite { () throws(SQLiteError) in
            (try ChangeFeed.cursor(Self.cursorName, database), try ChangeFeed.latest(database))
        }
        if let cursor, cursor >= latest { return nil }
        let compiled: CompiledQuery
        do {
            compiled = try reader.compile(settings.query, now: Date(), timeZone: settings.timeZone, database: database)
        } catch {
            throw .archive(error)
        }
        let (selection, renderer) = try Self.sqlite { () throws(SQLiteError) in
            let selection = try ExportSelection(compiled: compiled, account: nil, everything: false, database: database)
            let renderer = try Renderer(database: database, selection: selection, clock: clock, settings: settings,
                                        // A batch's worth of rows: the rows with files or reactions are read
                                        // once (when the archive has few) instead of probed for every row.
                                        reading: try MessageRowReading(database, accounts: selection.accounts, rows: Self.batchSize),
                                        contacts: try ContactDirectory(database: database, selection: selection), memory: memory)
            return (selection, renderer)
        }
        guard let cursor, cursor >= 0 else {
            // The first pass (or a rebuild): every message the query selects, whatever the feed says, in id order:
            // each conversation's previous mail is the one rendered before it.
            let rows = try Self.sqlite { () throws(SQLiteError) -> [Int64] in
                let (sql, parameters) = selection.statement(scope: .init()).select("m.id", order: .oldestFirst)
                var rows: [Int64] = []
                try database.prepare(sql).forEachRow(parameters) { row in
                    rows.append(row.int(0))
                    return true
                }
                return rows
            }
            var threads = Renderer.Threads(gaps: nil)
            for start in stride(from: 0, to: rows.count, by: Self.batchSize) {
                try update(Array(rows[start..<min(start + Self.batchSize, rows.count)]), versions: nil, threads: &threads, renderer: renderer)
            }
            return latest
        }
        let changes = try Self.sqlite { () throws(SQLiteError) in
            try ChangeFeed.changes(after: cursor, upTo: latest, limit: Self.batchSize, database)
        }
        guard let last = changes.last else { return nil }
        // A row's latest change is its version (`message_changes` holds one row per message).
        var versions: [Int64: Int64] = [:]
        for change in changes { versions[change.row] = change.seq }
        let rows = versions.keys.sorted()
        var threads = Renderer.Threads(gaps: try Self.sqlite { () throws(SQLiteError) in try Renderer.gaps(among: rows, database) })
        try update(rows, versions: versions, threads: &threads, renderer: renderer)
        return last.seq
    }

    private static func sqlite<T>(_ body: () throws(SQLiteError) -> T) throws(MirrorError) -> T {
        do throws(SQLiteError) {
            return try body()
        } catch {
            throw .archive(.sqlite(error))
        }
    }

    /// The messages' mails as they are now (`rows` ascending, read in one statement), or their removal when gone
    /// or no longer selected. `versions`: each row's latest change when the caller read it from the feed (else
    /// looked up).
    private func update(_ rows: [Int64], versions: [Int64: Int64]?, threads: inout Renderer.Threads, renderer: Renderer) throws(MirrorError) {
        batchBegins()
        let messages = try Self.sqlite { () throws(SQLiteError) in try renderer.messages(rows) }
        // Both ascending: a row the query does not select (or gone) is missing from `messages`.
        var next = 0
        for row in rows {
            memory.ids[row] = nil
            var rendered: Renderer.Mail?
            if next < messages.count, messages[next].message.id == row {
                rendered = try Self.sqlite { () throws(SQLiteError) in
                    try renderer.mail(messages[next].message, accountID: messages[next].accountID, version: versions?[row],
                                     threads: &threads, into: &text)
                }
                next += 1
            }
            try update(row, rendered)
        }
    }

    private func update(_ row: Int64, _ rendered: Renderer.Mail?) throws(MirrorError) {
        guard let rendered else { return try remove(row) }
        let maildir = try openMaildir(rendered.folder)
        // FOLDER/new/STEM R<row> V<version> .roost, as bytes: the file is named from them.
        path.removeAll(keepingCapacity: true)
        path.append(contentsOf: maildir.path.utf8)
        path.append(contentsOf: "/new/".utf8)
        let nameStart = path.count
        MailFiles.appendName(rendered.timestamp, hashDigits: MailWriter.hashDigits(of: rendered.id), row: row,
                             version: rendered.version, to: &path)
        let final = String(decoding: path, as: UTF8.self)
        let existing = files.paths(of: row).compactMap(current)
        // Delivered already (a run interrupted before its cursor moved) and moved to `cur/` by a mail reader, maybe
        // flagged: left there. One still in `new/` is written again: the pass syncs after its renames, so a power cut
        // before the sync can have left the name without the data.
        if !existing.isEmpty {
            let name = String(decoding: path[nameStart...], as: UTF8.self)
            if let kept = existing.first(where: { path in
                let file = (path as NSString).lastPathComponent
                return (file == name || file.hasPrefix(name + ":")) && path.hasSuffix("/cur/" + file)
            }) {
                try drop(existing.filter { $0 != kept })
                files.set(row, path: kept)
                return
            }
        }
        path.append(0)
        try deliver(maildir, nameAt: nameStart, final: final)
        unsynced = true
        written += 1
        if !files.set(row, folder: maildir.path, timestamp: rendered.timestamp, id: rendered.id, version: rendered.version) {
            files.set(row, path: final)
        }
        try drop(existing.filter { $0 != final })
    }

    private func remove(_ row: Int64) throws(MirrorError) {
        let existing = files.paths(of: row)
        guard !existing.isEmpty else { return }
        try drop(existing.compactMap(current))
        files.remove(row)
    }

    private func drop(_ paths: [String]) throws(MirrorError) {
        for path in paths {
            if unlink(path) != 0 && errno != ENOENT { throw .io(path: path, operation: "remove", errno: errno) }
            unsynced = true
            removed += 1
        }
    }

    // MARK: Files

    /// Where a mail the mirror wrote at `path` is now, nil when gone: a mail reader (Dovecot, mutt) moves a mail from
    /// `new/` to `cur/` when it shows it, and renames it there as its flags change (`NAME:2,FLAGS`).
    private func current(_ path: String) -> String? {
        if access(path, F_OK) == 0 { return path }
        let folder = ((path as NSString).deletingLastPathComponent as NSString).deletingLastPathComponent
        let name = String((path as NSString).lastPathComponent.prefix { $0 != ":" })
        if access(folder + "/new/" + name, F_OK) == 0 { return folder + "/new/" + name }
        let cur = (try? FileManager.default.contentsOfDirectory(atPath: folder + "/cur")) ?? []
        return cur.first { $0 == name || $0.hasPrefix(name + ":") }.map { folder + "/cur/" + $0 }
    }

    /// Puts the mail (`text`) into `new/` as `final` (its name in `path` from `nameStart`), whole or not at all:
    /// written into an unnamed file in `tmp/` (O_TMPFILE) and linked into `new/` — one name made per mail, cheaper
    /// than a name made in `tmp/` and renamed (docs/performance.md). A name already in `new/` (a pass redone after a
    /// crash) is replaced: the file is linked into `tmp/` under the name and renamed over it. Not synced here: the
    /// pass syncs the mirror's filesystem once.
    private func deliver(_ maildir: OpenMaildir, nameAt nameStart: Int, final: String) throws(MirrorError) {
        if unnamedFiles {
            let descriptor = roost_open_tmpfile(maildir.tmp)
            if descriptor >= 0 {
                defer { close(descriptor) }
                try write(descriptor, final)
                let code = link(descriptor, into: maildir.new, nameAt: nameStart)
                if code == 0 { return }
                if code == EEXIST {
                    let staged = maildir.path + "/tmp/" + String(decoding: path[nameStart..<path.count - 1], as: UTF8.self)
                    if unlink(staged) != 0 && errno != ENOENT { throw .io(path: staged, operation: "remove", errno: errno) }
                    let code = link(descriptor, into: maildir.tmp, nameAt: nameStart)
                    if code != 0 { throw .io(path: staged, operation: "create", errno: code) }
                    return try move(staged, final)
                }
                // ENOENT: no `/proc` to name the file by (or no `new/`: the named way says which).
                guard code == ENOENT else { throw .io(path: final, operation: "create", errno: code) }
            } else {
                // A filesystem without unnamed files.
                guard errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL else {
                    throw .io(path: maildir.path + "/tmp", operation: "create a file in", errno: errno)
                }
            }
            unnamedFiles = false
        }
        let staged = maildir.path + "/tmp/" + String(decoding: path[nameStart..<path.count - 1], as: UTF8.self)
        let descriptor = open(staged, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        if descriptor < 0 { throw .io(path: staged, operation: "create", errno: errno) }
        do {
            defer { close(descriptor) }
            try write(descriptor, staged)
        }
        try move(staged, final)
    }

    /// Names the unnamed file open as `descriptor` with the name in `path` from `nameStart`, in the folder open as
    /// `folder`: by the descriptor itself, else by its `/proc/self/fd` name. 0, or the errno.
    private func link(_ descriptor: Int32, into folder: Int32, nameAt nameStart: Int) -> Int32 {
        path.withUnsafeBufferPointer { bytes in
            let name = UnsafeRawPointer(bytes.baseAddress! + nameStart).assumingMemoryBound(to: CChar.self)
            if descriptorLinks {
                if roost_link_descriptor(descriptor, folder, name) == 0 { return 0 }
                guard errno == ENOENT || errno == EPERM else { return errno }
                descriptorLinks = false
            }
            return linkat(AT_FDCWD, "/proc/self/fd/\(descriptor)", folder, name, AT_SYMLINK_FOLLOW) == 0 ? 0 : errno
        }
    }

    /// A Maildir below the mirror's folder (`""`, `/conversation`…), made when missing, its `tmp/` and `new/` open.
    private func openMaildir(_ relative: String) throws(MirrorError) -> OpenMaildir {
        // A flood's mails go to one folder after another: the same String (`RendererMemory.folders`), equal at once.
        if let last = lastOpened, last.relative == relative { return last.maildir }
        if let known = openFolders[relative] {
            lastOpened = (relative, known)
            return known
        }
        let folder = settings.maildir + relative
        try makeMaildir(folder)
        // A pass writing to many conversations keeps a few open at a time.
        if openFolders.count >= 16 { closeFolders() }
        let tmp = open(folder + "/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if tmp < 0 { throw .io(path: folder + "/tmp", operation: "open", errno: errno) }
        let new = open(folder + "/new", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if new < 0 {
            let code = errno
            close(tmp)
            throw .io(path: folder + "/new", operation: "open", errno: code)
        }
        let maildir = OpenMaildir(path: folder, tmp: tmp, new: new)
        openFolders[relative] = maildir
        lastOpened = (relative, maildir)
        return maildir
    }

    private func closeFolders() {
        for maildir in openFolders.values {
            close(maildir.tmp)
            close(maildir.new)
        }
        openFolders.removeAll(keepingCapacity: true)
        lastOpened = nil
    }

    private func move(_ staged: String, _ final: String) throws(MirrorError) {
        if rename(staged, final) != 0 { throw .io(path: final, operation: "move into place", errno: errno) }
    }

    private func write(_ descriptor: Int32, _ path: String) throws(MirrorError) {
        do throws(BackupError) {
            try BackupTar.writeAll(descriptor, text[...], path: path)
        } catch {
            throw .io(path: path, operation: "write", errno: { if case .io(_, _, let code) = error { code } else { EIO } }())
        }
    }

    /// Makes what the pass wrote, renamed, made and removed durable before the cursor moves: one syncfs(2) of the
    /// mirror's filesystem (data, names and folders at once; an fsync of each file and folder cost more CPU than the
    /// rest of the mirror, and sync(2) writes back every filesystem: docs/performance.md).
    private func syncFilesystem() throws(MirrorError) {
        guard unsynced else { return }
        let descriptor = open(settings.maildir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if descriptor < 0 { throw .io(path: settings.maildir, operation: "open", errno: errno) }
        defer { close(descriptor) }
        if roost_syncfs(descriptor) != 0 { throw .io(path: settings.maildir, operation: "sync", errno: errno) }
        unsynced = false
    }

    private func makeMaildir(_ folder: String) throws(MirrorError) {
        guard !madeFolders.contains(folder) else { return }
        try makeFolder(folder)
        for sub in ["tmp", "new", "cur"] { try makeFolder(folder + "/" + sub) }
        madeFolders.insert(folder)
    }

    private func makeFolder(_ path: String) throws(MirrorError) {
        var status = stat()
        if stat(path, &status) == 0 { return }
        let parent = (path as NSString).deletingLastPathComponent
        if !parent.isEmpty && parent != path { try makeFolder(parent) }
        if mkdir(path, 0o700) != 0 && errno != EEXIST { throw .io(path: path, operation: "create", errno: errno) }
        unsynced = true
    }

    /// Reads which mails the folders hold (names this mirror wrote, in `new/` and `cur/`).
    private func scan() {
        guard let enumerator = FileManager.default.enumerator(atPath: settings.maildir) else { return }
        while let relative = enumerator.nextObject() as? String {
            let parts = relative.split(separator: "/")
            guard parts.count >= 2, parts[parts.count - 2] == "new" || parts[parts.count - 2] == "cur",
                  let mail = Self.row(ofMail: String(parts[parts.count - 1])) else { continue }
            files.add(mail.row, path: settings.maildir + "/" + relative)
            madeFolders.insert(settings.maildir + "/" + parts.dropLast(2).joined(separator: "/"))
        }
    }
}

/// Where the mirror's mails are: a message row's file in `new/` or `cur/`, held as a few numbers — its Maildir and
/// what a mail reader appended to its name in `cur/` (indexes of strings held once), its name's time, hash and
/// version — from which its path is made again when the row changes: 40 bytes a mail in the table where a path held
/// as a string took ~200 (`roost run` holds a whole mirror's, a million mails for a large archive). A name that does
/// not come out the same from those numbers (not one this mirror writes), and a row's second file (an older version a
/// crash left), are kept as paths.
struct MailFiles {
    private struct Mail {
        var folder: Int32
        /// -1: in `new/`; else in `cur/`, with `suffixes[suffix]` after the name (`:2,S`, or "").
        var suffix: Int32
        var timestamp: Int64
        var hash: UInt64
        var version: Int64
    }

    /// Strings many mails share (Maildirs, a reader's flags), each held once.
    private struct Shared {
        private(set) var strings: [String] = []
        private var indexes: [String: Int32] = [:]

        mutating func index(of string: String) -> Int32 {
            if let known = indexes[string] { return known }
            let index = Int32(strings.count)
            strings.append(string)
            indexes[string] = index
            return index
        }
    }

    private var mails: [Int64: Mail] = [:]
    private var others: [Int64: [String]] = [:]
    private var folders = Shared()
    private var suffixes = Shared()

    var rows: [Int64] { Array(Set(mails.keys).union(others.keys)) }

    /// The row's files' paths (none when it has no mail).
    func paths(of row: Int64) -> [String] {
        var paths = others[row] ?? []
        if let mail = mails[row] { paths.insert(path(of: row, mail), at: 0) }
        return paths
    }

    /// The row's one file is now the mail just delivered into `new/` of `folder`, named from these (`MailWriter`'s
    /// stem, `R<row>V<version>.roost`); false when `id` has no 16 hex digits to keep as a number (then keep the path).
    mutating func set(_ row: Int64, folder: String, timestamp: Int64, id: String, version: Int64) -> Bool {
        guard let hash = Self.hash(MailWriter.hashDigits(of: id)) else { return false }
        others[row] = nil
        mails[row] = Mail(folder: folders.index(of: folder), suffix: -1, timestamp: timestamp, hash: hash, version: version)
        return true
    }

    /// The row's one file is now `path`.
    mutating func set(_ row: Int64, path: String) {
        mails[row] = nil
        others[row] = nil
        add(row, path: path)
    }

    /// One more file of the row (read from the folders).
    mutating func add(_ row: Int64, path: String) {
        if mails[row] == nil, let mail = parse(row, path) {
            mails[row] = mail
        } else {
            others[row, default: []].append(path)
        }
    }

    mutating func remove(_ row: Int64) {
        mails[row] = nil
        others[row] = nil
    }

    private func path(of row: Int64, _ mail: Mail) -> String {
        var bytes = Array(folders.strings[Int(mail.folder)].utf8)
        bytes.append(contentsOf: (mail.suffix < 0 ? "/new/" : "/cur/").utf8)
        Self.appendName(mail.timestamp, hashDigits: Self.hexDigits(mail.hash), row: row, version: mail.version, to: &bytes)
        if mail.suffix >= 0 { bytes.append(contentsOf: suffixes.strings[Int(mail.suffix)].utf8) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A mirror mail's name, `STEM` `R<row>V<version>.roost` (`MailWriter`'s stem: the mail's time and the
    /// Message-ID's first 16 hex digits), the same on every run (`MailMirrorWriter.row(ofMail:)` reads it back).
    static func appendName(_ timestamp: Int64, hashDigits: some Sequence<UInt8>, row: Int64, version: Int64, to out: inout [UInt8]) {
        MailWriter.appendStem(timestamp, hashDigits: hashDigits, to: &out)
        out.append(UInt8(ascii: "R"))
        MailMessageBuilder.forEachDigit(of: row) { out.append($0) }
        out.append(UInt8(ascii: "V"))
        MailMessageBuilder.forEachDigit(of: version) { out.append($0) }
        out.append(contentsOf: ".roost".utf8)
    }

    /// `FOLDER/new/NAME` or `FOLDER/cur/NAME[SUFFIX]` of `row` as numbers, when the path made from them is `path`.
    private mutating func parse(_ row: Int64, _ fullPath: String) -> Mail? {
        let utf8 = Array(fullPath.utf8)
        guard let slash = utf8.lastIndex(of: UInt8(ascii: "/")), slash >= 4 else { return nil }
        let sub = String(decoding: utf8[(slash - 4)..<slash], as: UTF8.self)
        guard sub == "/new" || sub == "/cur" else { return nil }
        let name = utf8[(slash + 1)...]
        let base = name.prefix { $0 != UInt8(ascii: ":") }
        // SECONDS.MMILLISECONDSPHASH R<row> V<version> .roost: read as bytes (a start reads a whole mirror's names).
        guard base.count > 6, base.suffix(6).elementsEqual(".roost".utf8),
              let dotM = base.firstRange(of: ".M".utf8), let p = base[dotM.upperBound...].firstIndex(of: UInt8(ascii: "P")),
              p + 18 < base.endIndex, base[p + 17] == UInt8(ascii: "R"), let hash = Self.hash(base[(p + 1)..<(p + 17)]),
              let v = base[(p + 18)...].lastIndex(of: UInt8(ascii: "V")),
              Self.number(base[(p + 18)..<v]) == row, let version = Self.number(base[(v + 1)..<(base.endIndex - 6)]),
              let seconds = Self.number(base[..<dotM.lowerBound]), let milliseconds = Self.number(base[dotM.upperBound..<p])
        else { return nil }
        let (timestamp, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        guard !overflow else { return nil }
        let folder = String(decoding: utf8[..<(slash - 4)], as: UTF8.self)
        let suffix = sub == "/cur" ? suffixes.index(of: String(decoding: name[base.endIndex...], as: UTF8.self)) : -1
        let found = Mail(folder: folders.index(of: folder), suffix: suffix, timestamp: timestamp &+ milliseconds, hash: hash,
                         version: version)
        return path(of: row, found) == fullPath ? found : nil
    }

    /// Decimal digits, maybe after a `-`, as a number (nil for anything else or out of range; a form `path(of:_:)`
    /// would not write again, such as a leading zero, is caught by the round trip).
    private static func number(_ digits: ArraySlice<UInt8>) -> Int64? {
        Int64(String(decoding: digits, as: UTF8.self))
    }

    /// 16 lower-case hex digits as a number (what `MailMessageBuilder.messageID` writes), nil for anything else.
    private static func hash(_ digits: some Collection<UInt8>) -> UInt64? {
        guard digits.count == 16 else { return nil }
        var value: UInt64 = 0
        for digit in digits {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = value << 4 | UInt64(digit - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = value << 4 | UInt64(digit - UInt8(ascii: "a") + 10)
            default: return nil
            }
        }
        return value
    }

    private static func hexDigits(_ value: UInt64) -> [UInt8] {
        stride(from: 60, through: 0, by: -4).map { shift in
            let digit = UInt8(truncatingIfNeeded: value >> UInt64(shift)) & 0x0F
            return digit < 10 ? 0x30 + digit : 0x57 + digit
        }
    }
}

/// A Maildir's folder, and its `tmp/` and `new/` open (`MailMirrorWriter.openMaildir`).
private struct OpenMaildir {
    var path: String
    var tmp: Int32
    var new: Int32
}

/// What the renderer keeps from one pass to the next (the mirror's thread alone uses it).
final class RendererMemory {
    /// The Message-IDs of rows rendered lately, for the next mails' threading headers (a flood's mails each name
    /// the one before): row → Message-ID, forgotten when a row changes, emptied past 10 000.
    var ids: [Int64: String] = [:]
    /// With `split = conversation`: a conversation's folder below the mirror's (`/JID` or `/account/JID`), its
    /// safe names worked out once.
    var folders: [SliceKey: String] = [:]
    let addresses = MailMessageBuilder.AddressMemo()
}

/// One snapshot's way from message rows to their mails: the rows through the mirror's query, read a batch at a
/// time in one statement; each one's conversation's first and previous mail in the same Maildir (what an export of
/// that Maildir chains it to); its attachments. Its reads are prepared when it is made: their SQL is the same for
/// every batch and mail, only the values change.
private final class Renderer {
    let database: Database
    let selection: ExportSelection
    let clock: ZoneClock
    let settings: MirrorSettings
    let reading: MessageRowReading
    let contacts: ContactDirectory
    let memory: RendererMemory
    /// Rows by their numbers (a JSON array); a Maildir's newest row before a row; a Maildir's oldest row.
    private let rowsRead: Statement
    private let earlierRead: Statement
    private let firstRead: Statement

    struct Mail {
        /// Below the mirror's top folder: `""`, `/conversation`, `/account/conversation` or `/2026-01`.
        var folder: String
        /// The Message-ID and the message's time: the mail's name's stem (`MailWriter.appendStem`).
        var id: String
        var timestamp: Int64
        var version: Int64
    }

    /// A Maildir's thread: its conversation and, with `split = month`, its month's first millisecond.
    struct ThreadKey: Hashable {
        var slice: SliceKey
        var month: Int64
    }

    /// What a pass knows of its Maildirs' threads: the last row it rendered in each (its rows come in ascending
    /// order) and each one's first Message-ID once looked up.
    struct Threads {
        /// The archive's rows between the pass's lowest and highest row that the pass does not render, ascending:
        /// a row rendered earlier in a Maildir is the previous one of the next row there when none of these lies
        /// between them (every other row in between was rendered, or is not selected). nil: none (the first pass
        /// renders every selected row).
        var gaps: [Int64]?
        var last: [ThreadKey: Int64] = [:]
        var first: [ThreadKey: String?] = [:]

        /// Whether no row the pass does not render lies between `earlier` and `row`.
        func adjacent(_ earlier: Int64, _ row: Int64) -> Bool {
            guard let gaps else { return true }
            // The first gap above `earlier`, by bisection.
            var low = 0, high = gaps.count
            while low < high {
                let middle = (low + high) / 2
                if gaps[middle] <= earlier { low = middle + 1 } else { high = middle }
            }
            return low == gaps.count || gaps[low] >= row
        }
    }

    /// The rows of the archive between the first and last of `rows` (ascending) that are not among them; nil
    /// (no carrying) when there are more than a batch's worth.
    static func gaps(among rows: [Int64], _ database: Database) throws(SQLiteError) -> [Int64]? {
        guard let low = rows.first, let high = rows.last else { return [] }
        let limit = MailMirrorWriter.batchSize * 2
        var gaps: [Int64] = []
        var index = 0
        var read = 0
        try database.cached("SELECT id FROM messages WHERE id > ? AND id < ? ORDER BY id LIMIT ?")
            .forEachRow([.integer(low), .integer(high), .integer(Int64(limit))]) { row in
                let id = row.int(0)
                read += 1
                while index < rows.count && rows[index] < id { index += 1 }
                if index == rows.count || rows[index] != id { gaps.append(id) }
                return true
            }
        return read < limit ? gaps : nil
    }

    init(database: Database, selection: ExportSelection, clock: ZoneClock, settings: MirrorSettings,
         reading: MessageRowReading, contacts: ContactDirectory, memory: RendererMemory) throws(SQLiteError) {
        self.database = database
        self.selection = selection
        self.clock = clock
        self.settings = settings
        self.reading = reading
        self.contacts = contacts
        self.memory = memory
        // Any values do: the SQL depends only on the reads' shape (a month bounds them or not).
        let shape = ExportSelection.Scope(slice: ConversationSlice(accountID: 0, account: "", conversation: "", messageCount: 0),
                                          timeRange: settings.split == .month ? 0...0 : nil)
        rowsRead = try database.cached(selection.statement(scope: .init()).select(reading.columns(), among: .text("[]")).0)
        earlierRead = try database.cached(Self.before(0, selection, shape).select("m.id", order: .newestFirst, limit: 1).0)
        firstRead = try database.cached(selection.statement(scope: shape).select("m.id", order: .oldestFirst, limit: 1).0)
    }

    /// A message read, and its account's id.
    struct Loaded {
        var message: MessageRow
        var accountID: Int64
    }

    /// The messages of `rows` (ascending) the query selects, in that order, with their accounts' ids, in one
    /// statement (`json_each` drives it: the ids' order).
    func messages(_ rows: [Int64]) throws(SQLiteError) -> [Loaded] {
        var found: [Loaded] = []
        found.reserveCapacity(rows.count)
        var ids: [UInt8] = [UInt8(ascii: "[")]
        for row in rows {
            if ids.count > 1 { ids.append(UInt8(ascii: ",")) }
            ids.append(contentsOf: String(row).utf8)
        }
        ids.append(UInt8(ascii: "]"))
        let parameters = selection.statement(scope: .init()).select("", among: .text(String(decoding: ids, as: UTF8.self))).1
        try rowsRead.forEachRow(parameters) { row throws(SQLiteError) in
            found.append(Loaded(message: try reading.row(row), accountID: row.int(1)))
            return true
        }
        return found
    }

    /// `version`: the row's latest change, when the caller knows it.
    /// `message` is borrowed from the batch's array (a copy of a `MessageRow` retains and releases each of its
    /// two dozen references).
    func mail(_ message: borrowing MessageRow, accountID: Int64, version: Int64?, threads: inout Threads,
              into text: inout [UInt8]) throws(SQLiteError) -> Mail? {
        let row = message.id
        let slice = ConversationSlice(accountID: accountID, account: message.account, conversation: message.conversation, messageCount: 0)
        let sliceKey = SliceKey(accountID: accountID, conversation: message.conversation)
        var folder = ""
        var range: ClosedRange<Int64>?
        switch settings.split {
        case .none: break
        case .conversation:
            if let known = memory.folders[sliceKey] {
                folder = known
            } else {
                if settings.accountFolders { folder += "/" + SafeFileName.component(message.account) }
                folder += "/" + SafeFileName.component(message.conversation)
                memory.folders[sliceKey] = folder
            }
        case .month:
            let time = clock.civil(message.timestamp)
            folder = "/" + time.monthText
            let next = clock.startOfMonth(year: time.year, month: time.month + 1)
            range = clock.startOfMonth(year: time.year, month: time.month)...(next == .max ? Int64.max : next - 1)
        }
        let scope = ExportSelection.Scope(slice: slice, timeRange: range)
        let key = ThreadKey(slice: sliceKey, month: range?.lowerBound ?? 0)
        var previous: String?
        var first: String?
        let earlier: Int64?
        if let carried = threads.last[key], threads.adjacent(carried, row) {
            earlier = carried
        } else {
            earlier = try earlierRead.scalarInt(Self.before(row, selection, scope).parameters(limit: 1))
        }
        if let earlier {
            previous = try messageID(earlier)
            if let known = threads.first[key] {
                first = known
            } else {
                first = try firstRead.scalarInt(selection.statement(scope: scope).parameters(limit: 1)).flatMap(messageID)
                threads.first[key] = first
            }
        }
        threads.last[key] = row
        let embedded = message.attachments.map { attachment in settings.attachmentLimit.flatMap { MailAttachment.load(attachment, limit: $0) } }
        let (id, _) = MailWriter.mail(message, slice: slice, first: first, previous: previous, embedded: embedded,
                                      clock: clock, contacts: contacts, addresses: memory.addresses, into: &text)
        var version = version
        if version == nil { version = try database.cached("SELECT seq FROM message_changes WHERE message_row = ?").scalarInt([.integer(row)]) }
        if memory.ids.count >= 10_000 { memory.ids.removeAll(keepingCapacity: true) }
        memory.ids[row] = id
        return Mail(folder: folder, id: id, timestamp: message.timestamp, version: version ?? 0)
    }

    /// The Message-ID of `row`: remembered, or read.
    private func messageID(_ row: Int64) throws(SQLiteError) -> String? {
        if let known = memory.ids[row] { return known }
        guard let message = try messages([row]).first?.message else { return nil }
        let id = MailMessageBuilder.messageID(message)
        memory.ids[row] = id
        return id
    }

    private static func before(_ row: Int64, _ selection: ExportSelection, _ scope: ExportSelection.Scope) -> MessageStatement {
        var statement = selection.statement(scope: scope)
        statement.restrict("m.id < ?", [.integer(row)])
        return statement
    }
}

/// The mirror's owner in `roost run`: a thread (`roost.mirror`) that sleeps in `poll(2)` until the archive writer
/// commits (`ArchiveWriter.onCommit` writes one byte to its pipe; a wake-up already pending is not repeated, so
/// the writer never waits for the mirror), then writes what changed: at once after a quiet spell, else (a flood) once
/// the commits of the next half second are in (`gathering`). A failing pass (a full disk) is logged once and tried again at the next wake-up; ingest goes on meanwhile.
public final class MailMirror: Sendable {
    private let wakeUp: WakePipe
    private let state = StateBox()
    private let end = OneShot<Void>()
    /// `status()`'s own connection: the thread holds `reader`'s for a whole pass, and a pass on a slow disk (a frozen
    /// filesystem) can last as long as the disk; `roost status` must still answer with the backlog then.
    private let statusReader: ArchiveReader
    /// The mirror's folder.
    public let maildir: String

    private final class StateBox: Sendable {
        let value = Mutex(State())

        func withLock<T>(_ body: (inout State) -> T) -> T {
            value.withLock { body(&$0) }
        }
    }

    private struct State {
        var pending = false
        var stopping = false
        var written = 0
        var removed = 0
        var stalled: String?
        var writingSince: Int64?
    }

    /// `log(warning, text)`: what the mirror reports (a stall, warning; its end, not). `seen(account, conversation, row)`:
    /// with `read_from_mirror`, the user marked the mail of `row` seen (called on the mirror's thread).
    /// The thread's first pass starts at once.
    public init(settings: MirrorSettings, reader: ArchiveReader, writer: ArchiveWriter,
                log: @escaping @Sendable (_ warning: Bool, _ text: String) -> Void,
                seen: @escaping @Sendable (_ account: String, _ conversation: String, _ row: Int64) -> Void = { _, _, _ in }) throws(MirrorError) {
        guard let wakeUp = WakePipe() else { throw .io(path: "pipe", operation: "create", errno: errno) }
        self.wakeUp = wakeUp
        do throws(ArchiveError) { statusReader = try ArchiveReader(path: reader.path) } catch { throw .archive(error) }
        maildir = settings.maildir
        let (state, end) = (state, end)
        writer.onCommit {
            let first = state.withLock { state in defer { state.pending = true }; return !state.pending }
            if first { wakeUp.wake() }
        }
        startThread(named: "roost.mirror") {
            Self.run(settings: settings, reader: reader, writer: writer, state: state, wake: wakeUp, log: log, seen: seen)
            end.fulfil(())
        }
    }

    /// Ends the thread and waits for it. Idempotent.
    public func stop() {
        let already = state.withLock { state in defer { state.stopping = true }; return state.stopping }
        if !already { wakeUp.wake() }
        end.wait()
    }

    deinit {
        stop()
    }

    public func status() -> MirrorStatus {
        let position = try? statusReader.feedPosition(cursor: MailMirrorWriter.cursorName)
        return state.withLock { state in
            MirrorStatus(maildir: maildir, position: position?.cursor.flatMap { $0 >= 0 ? $0 : nil }, latest: position?.latest ?? 0,
                         backlog: position?.backlog ?? 0, written: state.written, removed: state.removed, stalled: state.stalled,
                         writingSince: state.writingSince)
        }
    }

    private static func run(settings: MirrorSettings, reader: ArchiveReader, writer: ArchiveWriter, state: StateBox, wake: WakePipe,
                            log: @Sendable (Bool, String) -> Void, seen: @Sendable (String, String, Int64) -> Void) {
        var made: MailMirrorWriter?
        let watcher = settings.readFromMirror ? SeenWatcher() : nil
        var lastPass: ContinuousClock.Instant?
        while true {
            state.withLock { $0.pending = false }
            wake.drain()
            if state.withLock({ $0.stopping }) { return }
            state.withLock { $0.writingSince = Timestamp.now() }
            do throws(MirrorError) {
                let mirror: MailMirrorWriter
                if let made {
                    mirror = made
                } else {
                    mirror = try MailMirrorWriter(settings: settings, reader: reader, writer: writer)
                    mirror.batchBegins = { state.withLock { $0.writingSince = Timestamp.now() } }
                    made = mirror
                }
                try mirror.catchUp()
                watcher?.watch(mirror.madeFolders)
                let recovered = state.withLock { state in
                    defer { state.stalled = nil; state.written = mirror.written; state.removed = mirror.removed }
                    return state.stalled != nil
                }
                if recovered { log(false, "mirror: writing again to \(settings.maildir)") }
            } catch {
                let first = state.withLock { state in
                    defer { state.stalled = error.description; state.written = made?.written ?? 0; state.removed = made?.removed ?? 0 }
                    return state.stalled == nil
                }
                if first { log(true, "mirror: stalled (\(error)); archiving goes on, the mirror tries again at the next commit") }
            }
            state.withLock { $0.writingSince = nil }
            lastPass = .now
            var descriptors = [pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0)]
            if let watcher { descriptors.append(pollfd(fd: watcher.descriptor, events: Int16(POLLIN), revents: 0)) }
            while !state.withLock({ $0.pending || $0.stopping }) {
                let ready = poll(&descriptors, nfds_t(descriptors.count), -1)
                if ready < 0 && errno != EINTR { return }
                if descriptors[0].revents != 0 { break }
                if let watcher, descriptors[1].revents != 0 {
                    for row in watcher.seenRows() {
                        if let (account, conversation) = try? reader.conversation(ofRow: row) { seen(account, conversation, row) }
                    }
                }
            }
            // A commit after a quiet spell is written at once (a chat's message is in the Maildir in milliseconds).
            // One within `gathering` of the last pass — a flood, or that pass's own cursor commit — waits for the
            // commits of the next `gathering`, which go into the same pass: a flood's mails are written in batches,
            // each with one cursor commit and one sync of the filesystem, and still appear within a second (a pass of
            // a few hundred mails takes milliseconds; a pass's own costs, spread over its mails: docs/performance.md).
            if !state.withLock({ $0.stopping }), let lastPass, ContinuousClock.now - lastPass < .microseconds(Self.gathering) {
                usleep(Self.gathering)
            }
        }
    }

    /// How long a wake-up soon after a pass waits for more commits before writing (microseconds).
    static let gathering: useconds_t = 500_000
}

/// inotify on the mirror's `cur/` folders: the rows of mails moved there (or renamed there) with the `S` flag.
private final class SeenWatcher {
    let descriptor: Int32
    private var watched: Set<String> = []

    init?() {
        let descriptor = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard descriptor >= 0 else { return nil }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Watches the `cur/` folders of the Maildirs not watched yet.
    func watch(_ folders: Set<String>) {
        for folder in folders.subtracting(watched) where inotify_add_watch(descriptor, folder + "/cur", UInt32(IN_MOVED_TO | IN_CREATE)) >= 0 {
            watched.insert(folder)
        }
    }

    /// The rows of the mails that arrived in a `cur/` marked seen since the last call.
    func seenRows() -> [Int64] {
        var rows: [Int64] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let header = MemoryLayout<inotify_event>.size
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            var offset = 0
            while offset + header <= count {
                let length = buffer.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)) }
                let name = String(decoding: buffer[(offset + header)..<min(offset + header + length, count)].prefix { $0 != 0 }, as: UTF8.self)
                if let mail = MailMirrorWriter.row(ofMail: name), mail.flags.contains("S") { rows.append(mail.row) }
                offset += header + length
            }
        }
        return rows
    }
}
