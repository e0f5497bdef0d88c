internal import CGLib

/// Owns a GLib `GKeyFile`, the parser of record for Roost's INI syntax (escapes, whitespace, comments).
final class KeyFile {
    private let handle: OpaquePointer

    struct LoadError: Error {
        let message: String
    }

    enum ValueFailure: Error {
        case missing
        /// GLib rejected the value (bad escape sequence, not UTF-8); its message may quote the value,
        /// so it is not kept.
        case invalid
    }

    init(text: String) throws(LoadError) {
        handle = g_key_file_new()
        var error: UnsafeMutablePointer<GError>?
        let length = gsize(text.utf8.count)
        let loaded = text.withCString { bytes in
            g_key_file_load_from_data(handle, bytes, length, G_KEY_FILE_NONE, &error)
        }
        if loaded == 0 {
            let message = error.map { String(cString: $0.pointee.message) } ?? "unknown GLib error"
            if let error { g_error_free(error) }
            throw LoadError(message: message)
        }
    }

    deinit {
        g_key_file_free(handle)
    }

    var groups: [String] {
        Self.takeStrings(g_key_file_get_groups(handle, nil))
    }

    func keys(in group: String) -> [String] {
        Self.takeStrings(g_key_file_get_keys(handle, group, nil, nil))
    }

    func string(group: String, key: String) throws(ValueFailure) -> String {
        var error: UnsafeMutablePointer<GError>?
        guard let value = g_key_file_get_string(handle, group, key, &error) else {
            let missing = error.map { $0.pointee.domain == g_key_file_error_quark()
                && ($0.pointee.code == G_KEY_FILE_ERROR_KEY_NOT_FOUND.rawValue
                    || $0.pointee.code == G_KEY_FILE_ERROR_GROUP_NOT_FOUND.rawValue) } ?? true
            if let error { g_error_free(error) }
            throw missing ? .missing : .invalid
        }
        defer { g_free(value) }
        return String(cString: value)
    }

    /// Copies a NULL-terminated `gchar**` into Swift strings and frees it.
    private static func takeStrings(_ list: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?) -> [String] {
        guard let list else { return [] }
        defer { g_strfreev(list) }
        var result: [String] = []
        var index = 0
        while let item = list[index] {
            result.append(String(cString: item))
            index += 1
        }
        return result
    }
}
