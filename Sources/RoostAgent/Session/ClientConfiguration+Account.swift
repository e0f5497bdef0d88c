import RoostXMPP

extension ClientConfiguration {
    /// The engine's settings for a configured account; the password is resolved by the caller, once.
    init(account: AccountConfig, password: String, maxStanzaBytes: Int) throws(ConfigError) {
        let jid: JID
        do { jid = try JID(account.jid) } catch {
            throw .invalid(path: "config", problems: [ConfigProblem(path: "config", line: nil, key: nil, message: "account \(account.jid): \(error)")])
        }
        self.init(jid: jid, password: password, host: account.host, port: account.port,
                  tlsMode: account.tls == .direct ? .direct : .starttls, caFile: account.caFile, pinnedSHA256: account.fingerprint,
                  resource: account.resource, priority: account.priority, maxStanzaBytes: maxStanzaBytes,
                  modules: [Receipts.module, Carbons.module, Correction.module, VCardAvatarUpdate.module, UserAvatar.module,
                            Bookmarks.module] + (account.omemo ? [OMEMO.module] : []))
    }
}
