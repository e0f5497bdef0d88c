/// Text from the network (or any other party) on its way into a log line: control characters, line breaks
/// and bidirectional overrides are shown as escapes, so a hostile server cannot forge log lines or reorder
/// what a reader sees.
public enum LogText {
    /// `text` made safe for one log line.
    public static func quote(_ text: String, limit: Int = 300) -> String {
        var out = ""
        var count = 0
        for scalar in text.unicodeScalars {
            if count >= limit {
                out += "…"
                break
            }
            count += 1
            switch scalar.value {
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            case 0x00..<0x20, 0x7F..<0xA0, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0x2028, 0x2029, 0xFEFF:
                out += "\\u{\(String(scalar.value, radix: 16))}"
            default:
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
