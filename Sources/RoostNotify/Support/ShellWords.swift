internal import CGLib

/// Splits `command = prog --flag "two words"` into argv with GLib's shell-like quoting rules, without
/// ever running a shell, so nothing in it (or in a message) is expanded.
enum ShellWords {
    static func split(_ text: String) -> [String]? {
        var count: Int32 = 0
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
        var error: UnsafeMutablePointer<GError>?
        guard g_shell_parse_argv(text, &count, &argv, &error) != 0, let argv else {
            if let error { g_error_free(error) }
            return nil
        }
        defer { g_strfreev(argv) }
        return (0..<Int(count)).compactMap { argv[$0].map { String(cString: $0) } }
    }
}
