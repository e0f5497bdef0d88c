/// The two string operations the archive needs on JIDs; it deliberately knows nothing else about XMPP.
enum JIDText {
    /// `local@domain/resource` → `local@domain`.
    static func bare(_ jid: String) -> String {
        // By byte (a `/` is one): the first `/`, unless a non-ASCII scalar next to it could join it into one
        // Character (a combining mark after, a prepended mark before), where the Character search this replaces
        // would not have split; that rare case keeps the Character search.
        let utf8 = jid.utf8
        guard let slash = utf8.firstIndex(of: UInt8(ascii: "/")) else { return jid }
        let next = utf8.index(after: slash)
        guard next == utf8.endIndex || utf8[next] < 0x80, slash == utf8.startIndex || utf8[utf8.index(before: slash)] < 0x80 else {
            guard let slash = jid.firstIndex(of: "/") else { return jid }
            return String(jid[..<slash])
        }
        return String(jid[..<slash])
    }

    static func resource(_ jid: String) -> String? {
        guard let slash = jid.firstIndex(of: "/") else { return nil }
        return String(jid[jid.index(after: slash)...])
    }
}
