import Foundation
import RoostXMPP

/// Photos from vCards, stored once by content as `avatars/<sha1>.<ext>` next to the archive (0600 files in a
/// 0700 folder: a contact's photo is as private as the archive).
struct AvatarStore {
    let directory: String

    init(dataDirectory: String) {
        directory = dataDirectory + "/avatars"
    }

    /// XEP-0153 §2: the hash is the SHA-1 of the image data, lowercase hex.
    static func hash(_ data: Data) -> String {
        let digest = (try? HashAlgorithm.sha1.digest(Array(data))) ?? []
        return digest.map { String(format: "%02x", $0) }.joined()
    }

    static func fileExtension(for mimeType: String) -> String {
        switch mimeType.lowercased() {
        case "image/png": "png"
        case "image/jpeg", "image/jpg": "jpg"
        case "image/gif": "gif"
        case "image/webp": "webp"
        case "image/svg+xml": "svg"
        default: "img"
        }
    }

    /// Writes the photo unless a file with its hash exists; returns the path.
    func store(_ photo: VCard.Photo, hash: String) throws(ActionFailure) -> String {
        let path = "\(directory)/\(hash).\(Self.fileExtension(for: photo.mimeType))"
        if FileManager.default.fileExists(atPath: path) { return path }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
            let temporary = path + ".tmp-\(getpid())"
            guard FileManager.default.createFile(atPath: temporary, contents: photo.data, attributes: [.posixPermissions: 0o600]) else {
                throw ActionFailure(.internalError, "could not write \(temporary)")
            }
            if rename(temporary, path) != 0 {
                unlink(temporary)
                throw ActionFailure(.internalError, "could not rename \(temporary): \(String(cString: strerror(errno)))")
            }
        } catch let failure as ActionFailure {
            throw failure
        } catch {
            throw ActionFailure(.internalError, "could not store the avatar in \(directory): \(error.localizedDescription)")
        }
        return path
    }
}
