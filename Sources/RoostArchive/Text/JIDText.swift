/// The two string operations the archive needs on JIDs; it deliberately knows nothing else about XMPP.
enum JIDText {
    /// `local@domain/resource` → `local@domain`.
    static func bare(_ jid: String) -> String {
        guard let slash = jid.firstIndex(of: "/") else { return jid }
        return String(jid[..<slash])
    }

    static func resource(_ jid: String) -> String? {
        guard let slash = jid.firstIndex(of: "/") else { return nil }
        return String(jid[jid.index(after: slash)...])
    }
}
