import Foundation

/// The bytes SQLite keeps of an archive on disk: the database file and its write-ahead log.
public enum ArchiveFiles {
    /// Whether `text` (as UTF-8) is anywhere in the archive's file or its `-wal`: what `roost forget` must leave no
    /// trace of (docs/forget.md).
    public static func contain(_ text: String, archive path: String) -> Bool {
        let needle = Data(text.utf8)
        return ["", "-wal"].contains { suffix in
            FileManager.default.contents(atPath: path + suffix)?.range(of: needle) != nil
        }
    }
}
