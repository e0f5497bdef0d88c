import Foundation

/// File and folder names derived from JIDs, nicknames and attachment names that are safe on any file system:
/// no separators or `..` (so no path traversal), no characters Windows or macOS reject, no reserved device
/// names, no hidden files, bounded length.
enum SafeFileName {
    private static let reserved: Set<String> = {
        var names: Set<String> = ["con", "prn", "aux", "nul"]
        for n in 1...9 { names.insert("com\(n)"); names.insert("lpt\(n)") }
        return names
    }()

    static func component(_ text: String, maxBytes: Int = 100) -> String {
        var result = ""
        for scalar in text.precomposedStringWithCanonicalMapping.unicodeScalars {
            let allowed = scalar.properties.isAlphabetic || scalar.properties.numericType != nil
                || "@.-_+=,".unicodeScalars.contains(scalar)
            // Combining marks alone are alphabetic in some scripts but render oddly at a name's start; keep
            // them, they cannot form a separator.
            let safe = allowed && scalar.value >= 0x20 && scalar.value != 0x7F
            if result.utf8.count + String(scalar).utf8.count > maxBytes { break }
            result.unicodeScalars.append(safe ? scalar : "_")
        }
        if let first = result.unicodeScalars.first, first == "." || first == "-" {
            result = "_" + result.dropFirst()
        }
        while let last = result.last, last == "." || last == " " {
            result = String(result.dropLast()) + "_"
        }
        if result.isEmpty { result = "_" }
        let stem = result.split(separator: ".", maxSplits: 1).first.map { String($0).lowercased() } ?? ""
        if reserved.contains(stem) { result = "_" + result }
        return result
    }
}
