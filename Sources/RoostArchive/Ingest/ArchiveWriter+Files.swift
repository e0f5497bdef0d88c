import RoostCore
import Foundation

/// What the download worker learned about one attachment.
public struct AttachmentUpdate: Sendable, Equatable {
    public var id: Int64
    public var state: AttachmentState
    /// Set once the file is in the store.
    public var sha256: String?
    public var size: Int64?
    public var mime: String?
    public var attempts: Int
    /// When to try again (UTC ms); nil: not scheduled.
    public var nextAttemptAt: Int64?

    public init(id: Int64, state: AttachmentState, sha256: String? = nil, size: Int64? = nil, mime: String? = nil,
                attempts: Int, nextAttemptAt: Int64? = nil) {
        self.id = id
        self.state = state
        self.sha256 = sha256
        self.size = size
        self.mime = mime
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
    }
}

extension ArchiveWriter {
    /// Records the outcome of a download (or a decision not to download) in its own small transaction, on the
    /// writer thread: the download threads send it there and wait for the answer.
    public func update(_ update: AttachmentUpdate) throws(ArchiveError) {
        try perform { ingestor throws(ArchiveError) in
            do throws(SQLiteError) {
                try ingestor.database.write { () throws(SQLiteError) in
                    try ingestor.database.run("""
                        UPDATE attachments SET state = ?, sha256 = coalesce(?, sha256), size = coalesce(?, size),
                            mime = coalesce(mime, ?), attempts = ?, next_attempt_at = ?, updated_at = ?
                        WHERE id = ?
                        """, [
                            .text(update.state.rawValue), SQLValue(update.sha256), SQLValue(update.size), SQLValue(update.mime),
                            .integer(Int64(update.attempts)), SQLValue(update.nextAttemptAt),
                            .integer(Timestamp.now()), .integer(update.id),
                        ])
                }
            } catch {
                throw .sqlite(error)
            }
        }
    }
}
