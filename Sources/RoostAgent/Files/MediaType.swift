import Foundation
internal import CNotify

/// Media types of files: what a sender or server said, else GIO's guess from the name and first bytes
/// (the freedesktop shared-mime-info database, as file managers use it).
enum MediaType {
    /// `type/subtype` in lowercase without parameters, or nil for an unusable value.
    static func normalized(_ value: String?) -> String? {
        guard let value else { return nil }
        let type = value.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespacesAndNewlines).lowercased() } ?? ""
        let parts = type.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty, type.utf8.count <= 127 else { return nil }
        return type
    }

    /// A generic type says nothing about the file.
    static func isGeneric(_ type: String?) -> Bool {
        type == nil || type == "application/octet-stream" || type == "binary/octet-stream"
    }

    /// GIO's guess from `name` and the first bytes of the file; nil when it has none (or GIO is missing).
    static func guess(name: String?, sample: [UInt8]) -> String? {
        guard roost_gio_load() == nil else { return nil }
        var uncertain: gboolean = 0
        let content = sample.withUnsafeBufferPointer { buffer in
            g_content_type_guess(name, buffer.baseAddress, gsize(buffer.count), &uncertain)
        }
        guard let content else { return nil }
        defer { g_free(content) }
        guard let mime = g_content_type_get_mime_type(content) else { return nil }
        defer { g_free(mime) }
        let type = normalized(String(cString: mime))
        return isGeneric(type) ? nil : type
    }

    /// Reads the first bytes of a file for `guess`.
    static func guess(name: String?, path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return guess(name: name, sample: []) }
        defer { try? handle.close() }
        let sample = (try? handle.read(upToCount: 4096)) ?? Data()
        return guess(name: name, sample: [UInt8](sample))
    }
}
