/// The one column list attachment queries select (table alias `a`), and how a row becomes an `AttachmentRecord`.
enum AttachmentReading {
    static let columns = """
        a.url, a.local_path, a.mime, a.size, a.name, a.description, a.width, a.height, a.hashes, a.sha256, a.state
        """
    static let columnCount = 11

    /// Reads the columns starting at `first`; a stored file's `localPath` is its place in `store`.
    static func record(_ row: Statement.Row, at first: Int32, store: FileStore) -> AttachmentRecord {
        let sha256 = row.optionalText(first + 9)
        let state = AttachmentState(rawValue: row.text(first + 10)) ?? .pending
        var localPath = row.optionalText(first + 1)
        if let sha256, state == .stored { localPath = store.path(forSHA256: sha256) }
        return AttachmentRecord(
            url: row.text(first), localPath: localPath, mime: row.optionalText(first + 2), size: row.optionalInt(first + 3),
            name: row.optionalText(first + 4), description: row.optionalText(first + 5),
            width: row.optionalInt(first + 6).map { Int($0) }, height: row.optionalInt(first + 7).map { Int($0) },
            hashes: FileHash.parse(column: row.optionalText(first + 8)), sha256: sha256, state: state)
    }
}
