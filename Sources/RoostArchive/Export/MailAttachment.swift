import Foundation

/// A file embedded in an exported mail as a MIME part, so a mailbox is complete on its own (and a Maildir
/// holds nothing but mail, which notmuch and mu expect).
struct MailAttachment {
    let fileName: String
    let mime: String
    let contents: Data

    /// Reads the locally stored copy, or nil when missing, unreadable or larger than `limit`.
    static func load(_ attachment: AttachmentRecord, limit: Int64) -> MailAttachment? {
        guard let path = attachment.localPath,
              let attributes = try? FileManager.default.attributesOfItem(atPath: path),
              (attributes[.type] as? FileAttributeType) == .typeRegular,
              let size = attributes[.size] as? Int, Int64(size) <= limit,
              let contents = FileManager.default.contents(atPath: path) else { return nil }
        let mime = attachment.mime.flatMap { Self.isToken($0) ? $0 : nil } ?? "application/octet-stream"
        return MailAttachment(fileName: attachment.displayName, mime: mime, contents: contents)
    }

    /// `type/subtype` made of RFC 2045 token characters only (the stored value came from the network).
    private static func isToken(_ mime: String) -> Bool {
        let parts = mime.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return false }
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$&^_.+-")
        return parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(allowed.contains) }
    }

    /// The part's headers and base64 body (76-character lines).
    var part: String {
        var text = "Content-Type: \(mime); name=\(Self.quotedOrEncoded(fileName))\n"
        text += "Content-Disposition: attachment; \(Self.filenameParameter(fileName))\n"
        text += "Content-Transfer-Encoding: base64\n\n"
        text += contents.base64EncodedString(options: [.lineLength76Characters, .endLineWithLineFeed])
        return text + "\n"
    }

    /// RFC 2231 `filename*=UTF-8''…` for non-ASCII names (read by every current mail client), else quoted.
    static func filenameParameter(_ name: String) -> String {
        if name.utf8.allSatisfy({ $0 >= 32 && $0 < 127 }) {
            return "filename=\"\(name.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\""))\""
        }
        let unreserved = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~".utf8)
        let encoded = name.utf8.map { unreserved.contains($0) ? String(UnicodeScalar($0)) : String(format: "%%%02X", $0) }.joined()
        return "filename*=UTF-8''\(encoded)"
    }

    /// The older `name=` parameter: quoted when ASCII, else an encoded word (what many clients still read).
    private static func quotedOrEncoded(_ name: String) -> String {
        if name.utf8.allSatisfy({ $0 >= 32 && $0 < 127 }) {
            return "\"\(name.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\""))\""
        }
        return "\"" + MIMEText.encodedWords(name).replacingOccurrences(of: "\n ", with: " ") + "\""
    }
}
