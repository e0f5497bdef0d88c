import Foundation
import RoostArchive
import RoostXMPP

/// The files a message shares, as attachment records to archive (and download): XEP-0447 stateless file
/// sharing (with its XEP-0446 metadata and XEP-0300 hashes), XEP-0066 out-of-band URLs, and a body that is
/// nothing but an upload link (what Conversations, Dino and Gajim send, `aesgcm://` links of XEP-0454
/// included). Each URL once, the richest description winning. Pure: no I/O.
enum SharedFiles {
    static let fileSchemes: Set<String> = ["https", "http", "aesgcm"]

    static func attachments(in message: Message) -> [AttachmentRecord] {
        var records: [AttachmentRecord] = []
        var seen: Set<String> = []
        for sharing in FileSharing.all(in: message) {
            guard let url = sharing.sources.first(where: { scheme(of: $0).map(fileSchemes.contains) == true }), seen.insert(url).inserted else { continue }
            let file = sharing.file
            records.append(AttachmentRecord(
                url: url, mime: file.mediaType, size: file.size, name: file.name ?? AttachmentRecord.fileName(fromURL: url),
                description: file.description, width: file.width, height: file.height,
                hashes: file.hashes.map { FileHash(algorithm: $0.algorithm, base64: $0.base64) }))
        }
        for url in OutOfBandData.urls(in: message) where seen.insert(url).inserted {
            records.append(AttachmentRecord(url: url, name: AttachmentRecord.fileName(fromURL: url)))
        }
        if let body = message.body, let url = uploadLink(body), seen.insert(url).inserted {
            records.append(AttachmentRecord(url: url, name: AttachmentRecord.fileName(fromURL: url)))
        }
        return records
    }

    /// The file of an end-to-end encrypted message: an upload link (usually `aesgcm://`, XEP-0454) that is
    /// the whole decrypted body.
    static func attachments(inDecryptedBody body: String) -> [AttachmentRecord] {
        uploadLink(body).map { [AttachmentRecord(url: $0, name: AttachmentRecord.fileName(fromURL: $0))] } ?? []
    }

    /// Pages, not files: a lone link to one of these is a link someone shared, not an upload.
    static let pageExtensions: Set<String> = ["html", "htm", "xhtml", "php", "asp", "aspx", "jsp", "cgi", "pl"]

    /// The body's URL when the body is exactly one upload-style link: an `aesgcm://` URL, or an http(s) URL
    /// whose path ends in a file name with an extension.
    static func uploadLink(_ body: String) -> String? {
        // No colon, no scheme: most bodies stop here, before Foundation's trimming (a per-message cost of live ingest).
        guard body.utf8.contains(UInt8(ascii: ":")) else { return nil }
        let text = body.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty, !text.contains(where: \.isWhitespace), let scheme = scheme(of: text), fileSchemes.contains(scheme),
              let components = URLComponents(string: text), let host = components.host, !host.isEmpty else { return nil }
        if scheme == "aesgcm" { return text }
        guard let name = AttachmentRecord.fileName(fromURL: text), let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        let ext = name[name.index(after: dot)...].lowercased()
        guard !ext.isEmpty, ext.count <= 8, !pageExtensions.contains(ext) else { return nil }
        return text
    }

    private static func scheme(of url: String) -> String? {
        guard let colon = url.firstIndex(of: ":") else { return nil }
        return url[..<colon].lowercased()
    }
}
