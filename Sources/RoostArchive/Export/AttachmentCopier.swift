import RoostCore
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
    /// The archive's folder: only files inside it (the file store, `avatars/`) are copied or linked, whatever a
    /// row says (an archive that imported a hostile `local_path` before imports refused them).
    private let archiveFolder: String
    private var names: [String: FileNameAllocator] = [:]
    private var copied: [String: String?] = [:]
    private var thumbnails: [String: (link: String, width: Int, height: Int)?] = [:]
    private(set) var copiedCount = 0
    private(set) var missingCount = 0

    init(linkBase: String, archiveFolder: String, folder: @escaping () throws(ExportError) -> String) {
        self.linkBase = linkBase
        self.archiveFolder = archiveFolder
        self.folder = folder
    }

    /// The link to the copy (relative to the export's top level), or nil when the file is not stored locally.
    func copy(_ source: String?, into subfolder: String, preferredName: String) throws(ExportError) -> String? {
        guard let source, !source.isEmpty else { return nil }
        if let known = copied[subfolder + "\u{0}" + source] { return known }
        var status = stat()
        guard stat(source, &status) == 0, status.st_mode & S_IFMT == S_IFREG, access(source, R_OK) == 0,
              FileStore.resolves(source, inside: archiveFolder) else {
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
    func copy(_ attachment: AttachmentRecord, of message: MessageRow) throws(ExportError) -> String? {
        try copy(attachment, timestamp: message.timestamp)
    }

    func copy(_ attachment: AttachmentRecord, timestamp: Int64) throws(ExportError) -> String? {
        let time = CivilTime(milliseconds: timestamp)
        let prefix = "\(time.dateText)_\(CivilTime.pad(time.hour))\(CivilTime.pad(time.minute))\(CivilTime.pad(time.second))"
        return try copy(attachment.localPath, into: "attachments", preferredName: prefix + "_" + attachment.displayName)
    }

    /// A smaller copy of the picture at `source` in `thumbnails/`, named after its copy `named` (a link as
    /// `copy` returns it); nil when the maker cannot read the picture.
    func thumbnail(of source: String, named copy: String, maker: any ThumbnailMaker,
                   maxSide: Int) throws(ExportError) -> (link: String, width: Int, height: Int)? {
        let key = "thumbnails\u{0}" + source
        if let known = thumbnails[key] { return known }
        let root = try folder()
        let target = root + "/thumbnails"
        if mkdir(target, 0o700) != 0 && errno != EEXIST { throw .io(path: target, operation: "create", errno: errno) }
        var allocator = names["thumbnails"] ?? FileNameAllocator()
        let stem = allocator.unique(Self.split((copy as NSString).lastPathComponent).0, extension: nil)
        names["thumbnails"] = allocator
        guard let made = maker.thumbnail(of: source, to: target + "/" + stem, maxSide: maxSide) else {
            thumbnails[key] = .some(nil)
            return nil
        }
        let result = (link: linkBase + "thumbnails/" + (made.path as NSString).lastPathComponent, width: made.width, height: made.height)
        thumbnails[key] = result
        return result
    }

    private static func split(_ name: String) -> (String, String?) {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex, name.distance(from: dot, to: name.endIndex) <= 10 else {
            return (name, nil)
        }
        return (String(name[..<dot]), String(name[name.index(after: dot)...]))
    }
}
