/// Everything the archive can fail with. A malformed search is `.query` (never an SQL error).
public enum ArchiveError: Error, Sendable, CustomStringConvertible {
    case sqlite(SQLiteError)
    case migrationFailed(version: Int, SQLiteError)
    case unsupportedSchemaVersion(found: Int, supported: Int)
    /// The reader found no archive (or an archive not yet initialised) at the path.
    case notAnArchive(path: String)
    /// A record handed to the writer breaks a rule (e.g. empty account JID); nothing of the batch was written.
    case invalidRecord(String)
    case query(QueryError)
    /// A name in a query or command fits several conversations, or none.
    case names(NameDirectory.ResolutionError)
    /// The archive writer had stopped (`ArchiveWriter.drainAndStop`) before it could do what was asked.
    case writerStopped

    public var description: String {
        switch self {
        case .sqlite(let error):
            return error.description
        case .migrationFailed(let version, let error):
            return "upgrading the archive to schema version \(version) failed: \(error). The archive was left at the previous version."
        case .unsupportedSchemaVersion(let found, let supported):
            return "the archive has schema version \(found) but this roost understands up to \(supported); upgrade roost."
        case .notAnArchive(let path):
            return "no archive at \(path); start `roost run` once to create it, or set [archive] path in the config."
        case .invalidRecord(let reason):
            return "invalid archive record: \(reason)"
        case .query(let error):
            return error.description
        case .names(let error):
            return error.description
        case .writerStopped:
            return "the archive writer has stopped"
        }
    }
}
