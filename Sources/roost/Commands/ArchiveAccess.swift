import Foundation
import RoostAgent
import RoostArchive
import RoostCore
import Synchronization

/// Opening the archive for reading, and turning archive errors into exit statuses.
enum ArchiveAccess {
    static func reader(_ context: CommandContext) throws -> ArchiveReader {
        try reader(context, config: try context.loadConfig())
    }

    static func reader(_ context: CommandContext, config: RoostConfig) throws -> ArchiveReader {
        guard FileManager.default.fileExists(atPath: config.archivePath) else {
            throw ArchiveMissing(path: config.archivePath)
        }
        context.output.info("archive: \(config.archivePath)")
        let reader: ArchiveReader
        do { reader = try ArchiveReader(path: config.archivePath) } catch { throw ArchiveFailure(error: error) }
        if !reader.missingIndexes.isEmpty {
            context.output.warning("the archive lacks \(reader.missingIndexes.count) indexes an import builds at its end (an import is "
                + "running, or was interrupted): reading works but may be slow; the import's end, `roost import` again or "
                + "`roost run` builds them")
        }
        return reader
    }
}

struct ArchiveMissing: CommandFailure {
    let path: String
    var exitCode: ExitCode { .nothingFound }
    var description: String { "no archive at \(path) yet — run `roost run` first (or set [archive] path)" }
}

struct ArchiveFailure: CommandFailure {
    let error: ArchiveError
    var exitCode: ExitCode {
        switch error {
        case .query: return .usage
        // A name that fits several conversations must be typed more precisely; one that fits none found nothing.
        case .names(.ambiguous): return .usage
        case .names(.unknown): return .nothingFound
        default: return .internalError
        }
    }
    var description: String {
        // The message once, under the query with a caret at its column.
        if case .query(let q) = error { return "invalid query:\n" + q.caretDiagram }
        return error.description
    }
}

/// Times as people and scripts read them, through the program's one date codec (`Timestamp`, `CivilTime`):
/// no formatter per row, the proleptic Gregorian calendar, every `Int64` printable.
enum TimeText {
    /// The local zone's offsets, cached between its transitions; one per process.
    private static let zone = Mutex(ZoneClock.local())

    /// RFC 3339 in UTC with milliseconds, for JSON.
    static func utc(_ ms: Int64) -> String {
        Timestamp.rfc3339(ms)
    }

    /// Local time to the minute (or the second), for people.
    static func local(_ ms: Int64, seconds: Bool = false) -> String {
        zone.withLock { $0.minuteText(ms, seconds: seconds) }
    }

    /// `local(ms)` appended as bytes.
    static func appendLocal(_ ms: Int64, to out: inout [UInt8]) {
        zone.withLock { $0.appendMinuteText(ms, to: &out) }
    }
}

extension MessageRow {
    /// True when the body is nothing but the link to an attachment (shown as `[file NAME SIZE]` instead).
    var bodyIsLink: Bool {
        let text = body?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        return text.isEmpty || attachments.contains { $0.url == text }
    }
}

extension AttachmentRecord {
    /// `[file bob.png 1.2 MB]`, with the state when the file is not kept.
    var tag: String {
        var text = "[file \(displayName)"
        if let size { text += " \(FileSize.text(size))" }
        if state != .stored { text += ", \(state.rawValue)" }
        return text + "]"
    }

    /// The attachment fields of `roost files --json`: the names of the message schema's attachment (`mime`, `path`;
    /// `name` here is the name shown, the URL's last part when the sender gave none).
    var summaryJSON: JSONObject {
        [
            "url": .string(url),
            "name": .string(displayName),
            "mime": .string(mime),
            "size": size.map { .int($0) } ?? .null,
            "state": .string(state.rawValue),
            "sha256": .string(sha256),
            "path": .string(localPath),
        ]
    }
}
