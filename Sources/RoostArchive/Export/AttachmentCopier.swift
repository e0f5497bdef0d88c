import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Copies (hard-links when it can) locally stored attachment files and avatars into the export's
/// `attachments/` and `avatars/` folders, under safe unique names, each source once.
final class AttachmentCopier {
    /// Where the folders are created (the staged export folder, or a staged `NAME_files` folder beside a file).
    private let folder: () throws(ExportError) -> String
    /// What a link from the export's top level starts with: "" inside a folder export, `NAME_files/` beside a file.
    let linkBase: String
    private var names: [String: FileNameAllocator] = [:]
    private var copied: [String: String?] = [:]
    private(set) var copiedCount = 0
    private(set) var missingCount = 0

    init(linkBase: String, folder: @escaping () throws(ExportError) -> String) {
        self.linkBase = linkBase
        self.folder = folder
    }

    /// The link to the copy (relative to the export's top level), or nil when the file is not stored locally.
    func copy(_ source: String?, into subfolder: String, preferredName: String) throws(ExportError) -> String? {
        guard let source, !source.isEmpty else { return nil }
        if let known = copied[subfolder + "\u{0}" + source] { return known }
        var status = stat()
        guard stat(source, &status) == 0, status.st_mode & S_IFMT == S_IFREG, access(source, R_OK) == 0 else {
            missingCount += 1
            copied[subfolder + "\u{0}" + source] = .some(nil)
            return nil
        }
        let root = try folder()
        let target = root + "/" + subfolder
        if mkdir(target, 0o700) != 0 && errno != EEXIST { throw .io(path: target, operation: "create", errno: errno) }
        var allocator = names[subfolder] ?? FileNameAllocator()
        let (stem, ext) = Self.split(SafeFileName.component(preferredName, maxBytes: 80))
        let name = allocator.unique(stem, extension: ext)
        names[subfolder] = allocator
        let destination = target + "/" + name
        if link(source, destination) != 0 {
            do {
                try FileManager.default.copyItem(atPath: source, toPath: destination)
            } catch {
                let code = (error as NSError).userInfo[NSUnderlyingErrorKey].map { ($0 as? NSError)?.code ?? 5 } ?? 5
                throw .io(path: destination, operation: "copy an attachment to", errno: Int32(code))
            }
        }
        copiedCount += 1
        let relative = linkBase + subfolder + "/" + name
        copied[subfolder + "\u{0}" + source] = .some(relative)
        return relative
    }

    /// Copies a message's attachment; the name keeps the original file name after a time prefix so that
    /// files sort by date.
    func copy(_ attachment: AttachmentRecord, of message: ArchivedMessage) throws(ExportError) -> String? {
        let original = URL(string: attachment.url)?.lastPathComponent
            ?? attachment.localPath.map { URL(fileURLWithPath: $0).lastPathComponent } ?? "file"
        let time = CivilTime(milliseconds: message.timestamp)
        let prefix = "\(time.dateText)_\(CivilTime.pad(time.hour))\(CivilTime.pad(time.minute))\(CivilTime.pad(time.second))"
        return try copy(attachment.localPath, into: "attachments", preferredName: prefix + "_" + (original.removingPercentEncoding ?? original))
    }

    private static func split(_ name: String) -> (String, String?) {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex, name.distance(from: dot, to: name.endIndex) <= 10 else {
            return (name, nil)
        }
        return (String(name[..<dot]), String(name[name.index(after: dot)...]))
    }
}
