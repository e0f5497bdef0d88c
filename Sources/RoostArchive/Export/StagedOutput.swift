import Foundation
internal import CSystem
#if canImport(Glibc)
import Glibc
#endif

/// A file or folder built under a temporary name beside its final path and renamed into place only when
/// complete, so an interrupted or failed export never leaves a half-written file under the final name.
final class StagedOutput {
    let finalPath: String
    let stagingPath: String
    let isFolder: Bool
    private let force: Bool
    private var committed = false

    /// Refuses an existing `finalPath` unless `force`. For a folder, creates the staging folder (0700).
    init(finalPath: String, isFolder: Bool, force: Bool) throws(ExportError) {
        let url = URL(fileURLWithPath: finalPath)
        self.finalPath = url.standardizedFileURL.path
        let parent = url.deletingLastPathComponent().path
        let name = url.lastPathComponent
        self.isFolder = isFolder
        self.force = force
        var status = stat()
        if lstat(self.finalPath, &status) == 0 && !force { throw .outputExists(path: finalPath) }
        var parentStatus = stat()
        if stat(parent, &parentStatus) != 0 && errno == ENOENT {
            // `-o Mail/xmpp` without Mail/: made, like `mkdir -p` (private, as the export will be).
            do {
                try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true,
                                                        attributes: [.posixPermissions: 0o700])
            } catch {
                throw .io(path: parent, operation: "create", errno: errno == 0 ? EACCES : errno)
            }
        }
        if stat(parent, &parentStatus) != 0 { throw .io(path: parent, operation: "write into", errno: errno) }
        if parentStatus.st_mode & S_IFMT != S_IFDIR { throw .io(path: parent, operation: "write into", errno: ENOTDIR) }
        stagingPath = parent + "/." + name + ".roost-partial-\(getpid())-\(UInt32.random(in: 0 ... .max))"
        if isFolder && mkdir(stagingPath, 0o700) != 0 { throw .io(path: finalPath, operation: "create", errno: errno) }
    }

    deinit {
        if !committed { discard() }
    }

    /// Moves the finished output to its final name (replacing an old one only with `force`). A folder export
    /// writes many files (a Maildir: one per message) without syncing each; one syncfs(2) of the folder's
    /// filesystem makes them durable before the rename publishes them.
    func commit() throws(ExportError) {
        if isFolder {
            let descriptor = open(stagingPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if descriptor >= 0 {
                _ = roost_syncfs(descriptor)
                close(descriptor)
            } else {
                sync()
            }
        }
        var status = stat()
        let exists = lstat(finalPath, &status) == 0
        if exists && !force { throw .outputExists(path: finalPath) }
        if exists && (isFolder || status.st_mode & S_IFMT == S_IFDIR) {
            // rename(2) cannot replace a non-empty folder: move the old one aside, then remove it.
            let aside = stagingPath + "-old"
            if rename(finalPath, aside) != 0 { throw .io(path: finalPath, operation: "replace", errno: errno) }
            if rename(stagingPath, finalPath) != 0 {
                let code = errno
                _ = rename(aside, finalPath)
                throw .io(path: finalPath, operation: "rename into place", errno: code)
            }
            try? FileManager.default.removeItem(atPath: aside)
        } else if rename(stagingPath, finalPath) != 0 {
            throw .io(path: finalPath, operation: "rename into place", errno: errno)
        }
        committed = true
        syncFolder(URL(fileURLWithPath: finalPath).deletingLastPathComponent().path)
    }

    func discard() {
        try? FileManager.default.removeItem(atPath: stagingPath)
    }

    /// Makes the rename itself durable.
    private func syncFolder(_ path: String) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if descriptor >= 0 {
            fsync(descriptor)
            close(descriptor)
        }
    }
}
