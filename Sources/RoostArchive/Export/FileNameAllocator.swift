/// Hands out names unique within one folder, compared case-insensitively (so two conversations that differ
/// only in case, or that sanitise to the same text, never overwrite each other on any file system).
struct FileNameAllocator {
    private var used: Set<String> = []

    /// `base.ext`, or `base-2.ext`, `base-3.ext`, … when taken. `ext` without the dot; nil for folders.
    mutating func unique(_ base: String, extension ext: String?) -> String {
        let suffix = ext.map { "." + $0 } ?? ""
        var candidate = base + suffix
        var n = 2
        while used.contains(candidate.lowercased()) {
            candidate = "\(base)-\(n)\(suffix)"
            n += 1
        }
        used.insert(candidate.lowercased())
        return candidate
    }

    mutating func reserve(_ name: String) {
        used.insert(name.lowercased())
    }
}
