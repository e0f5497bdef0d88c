import Foundation

/// File sizes for people: `512 bytes`, `1.2 MB`, `34 MB` (powers of 1000, as GNOME and macOS show them).
public enum FileSize {
    public static func text(_ bytes: Int64) -> String {
        if bytes < 1000 { return bytes == 1 ? "1 byte" : "\(bytes) bytes" }
        var value = Double(bytes)
        var unit = ""
        for next in ["kB", "MB", "GB", "TB"] {
            value /= 1000
            unit = next
            if value < 1000 { break }
        }
        if value < 10 {
            let tenths = Int((value * 10).rounded())
            return tenths % 10 == 0 ? "\(tenths / 10) \(unit)" : "\(tenths / 10).\(tenths % 10) \(unit)"
        }
        return "\(Int(value.rounded())) \(unit)"
    }

    /// A size people write: a number, optionally followed by K, M or G (KiB, MiB, GiB: powers of 1024) or
    /// KB, MB, GB (powers of 1000), e.g. `100M`, `1.5 GiB`, `500000`; nil when it is not one.
    public static func parse(_ text: String) -> Int64? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let digits = trimmed.prefix { $0.isNumber || $0 == "." }
        let unit = trimmed.dropFirst(digits.count).trimmingCharacters(in: .whitespaces).lowercased()
        let factors: [String: Double] = ["": 1, "b": 1, "k": 1024, "kib": 1024, "m": 1_048_576, "mib": 1_048_576,
                                         "g": 1_073_741_824, "gib": 1_073_741_824, "kb": 1e3, "mb": 1e6, "gb": 1e9]
        guard let number = Double(digits), let factor = factors[unit], number * factor >= 1, number * factor < 1e15 else { return nil }
        return Int64(number * factor)
    }
}
