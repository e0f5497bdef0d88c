import Foundation

/// Creates the archive file and its missing parent folders with private modes before SQLite opens it:
/// the archive holds private conversations, so the file is 0600 and folders we create are 0700.
/// SQLite gives its `-wal` and `-shm` files the same mode as the database file.
enum DatabaseFile {
    static func prepare(path: String) throws(SQLiteError) {
        let url = URL(fileURLWithPath: path)
        try createMissingFolders(url.deletingLastPathComponent().path)
        let fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        if fd >= 0 {
            fchmod(fd, 0o600)
            close(fd)
            return
        }
        let openErrno = errno
        guard openErrno == EEXIST else {
            throw SQLiteError(code: 14, message: "cannot create \(path): \(String(cString: strerror(openErrno)))")
        }
        // An existing archive readable by others is tightened rather than left exposed.
        var info = stat()
        if stat(path, &info) == 0, info.st_mode & 0o077 != 0, info.st_uid == getuid() {
            chmod(path, info.st_mode & 0o700)
        }
    }

    private static func createMissingFolders(_ folder: String) throws(SQLiteError) {
        guard !folder.isEmpty, folder != "/" else { return }
        var info = stat()
        if stat(folder, &info) == 0 { return }
        try createMissingFolders(URL(fileURLWithPath: folder).deletingLastPathComponent().path)
        if mkdir(folder, 0o700) != 0 && errno != EEXIST {
            throw SQLiteError(code: 14, message: "cannot create folder \(folder): \(String(cString: strerror(errno)))")
        }
        chmod(folder, 0o700)
    }
}
