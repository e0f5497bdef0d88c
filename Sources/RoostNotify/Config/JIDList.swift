/// Parses `mute = a@x, b@y` style lists: separated by commas, semicolons or spaces; bare JIDs, lower-cased.
enum JIDList {
    static func parse(_ text: String) -> Set<String> {
        Set(text.split(whereSeparator: { $0 == "," || $0 == ";" || $0 == " " || $0 == "\t" })
            .map { $0.lowercased() }
            .filter { !$0.isEmpty })
    }

    /// Accepts `user@domain`, `domain`, `room@service`; rejects resources and blanks.
    static func isPlausibleBareJID(_ jid: String) -> Bool {
        !jid.isEmpty && !jid.contains("/") && !jid.hasPrefix("@") && !jid.hasSuffix("@")
            && jid.filter({ $0 == "@" }).count <= 1
    }
}
