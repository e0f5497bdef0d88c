import Foundation

/// `roost verify`'s look at the file store: every file an attachment row says is stored is read again and
/// its SHA-256 compared with its name. With `repair`, a missing or damaged file is removed and its rows go
/// back to `pending`, with the SHA-256 kept as an advertised hash, so the agent downloads it again (while the
/// link works) and checks it.
public struct FileStoreVerification: Sendable {
    public struct Report: Sendable, Equatable {
        /// Distinct stored files read.
        public var checked = 0
        public var missing: [String] = []
        /// SHA-256 names whose bytes no longer match.
        public var corrupt: [String] = []
        public var unreadable: [String] = []
        /// Attachment rows sent back to download by `repair`.
        public var requeued = 0

        public init() {}

        public var intact: Int { checked - missing.count - corrupt.count - unreadable.count }
        public var consistent: Bool { (missing.isEmpty && corrupt.isEmpty && unreadable.isEmpty) || requeued > 0 }
    }

    public let archivePath: String

    public init(archivePath: String) {
        self.archivePath = archivePath
    }

    public func run(repair: Bool) throws(ArchiveError) -> Report {
        let reader = try ArchiveReader(path: archivePath)
        let store = FileStore(archivePath: archivePath)
        var report = Report()
        for file in try reader.storedFiles() {
            report.checked += 1
            switch store.check(sha256: file.sha256) {
            case .intact: continue
            case .missing: report.missing.append(file.sha256)
            case .corrupt: report.corrupt.append(file.sha256)
            case .unreadable: report.unreadable.append(file.sha256)
            }
        }
        let broken = report.missing + report.corrupt
        guard repair, !broken.isEmpty else { return report }
        let writer = try ArchiveWriter(path: archivePath, durability: .full)
        for sha256 in broken {
            unlink(store.path(forSHA256: sha256))
            report.requeued += try writer.requeueFile(sha256: sha256)
        }
        return report
    }
}

extension ArchiveWriter {
    /// Sends the stored rows of a lost file back to download; returns how many.
    func requeueFile(sha256: String) throws(ArchiveError) -> Int {
        let expected = "sha-256=" + Data(Hex.bytes(sha256) ?? []).base64EncodedString()
        return try perform { ingestor throws(ArchiveError) -> Int in
            do throws(SQLiteError) {
                return try ingestor.database.write { () throws(SQLiteError) -> Int in
                    try ingestor.database.run("""
                        UPDATE attachments SET state = 'pending', sha256 = NULL, attempts = 0, next_attempt_at = NULL,
                            hashes = CASE WHEN coalesce(hashes, '') LIKE '%sha-256=%' THEN hashes ELSE trim(coalesce(hashes, '') || ' ' || ?) END
                        WHERE sha256 = ? AND state = 'stored'
                        """, [.text(expected), .text(sha256)])
                    return Int(ingestor.database.changes)
                }
            } catch {
                throw .sqlite(error)
            }
        }
    }
}
