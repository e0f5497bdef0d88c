extension ArchiveReader {
    /// The account's contacts (roster members only unless `includeRemoved`), by JID.
    public func contacts(account: String, includeRemoved: Bool = false) throws(ArchiveError) -> [ContactRow] {
        try withDatabase { database throws(SQLiteError) in
            try ContactsQuery.contacts(database, account: account, rosterOnly: !includeRemoved)
        }
    }

    /// One contact (in the roster or not), or nil when the archive knows nothing of it.
    public func contact(account: String, jid: String) throws(ArchiveError) -> ContactRow? {
        try withDatabase { database throws(SQLiteError) in
            try ContactsQuery.contact(database, account: account, jid: jid)
        }
    }

    /// Friend requests others sent that were neither accepted nor denied, newest first, one per JID.
    public func pendingSubscriptionRequests(account: String) throws(ArchiveError) -> [SubscriptionRequestRow] {
        try withDatabase { database throws(SQLiteError) in
            try ContactsQuery.subscriptionEvents(database, account: account, pendingIncomingOnly: true)
        }
    }

    /// Every subscription request and answer, both directions, newest first.
    public func subscriptionEvents(account: String) throws(ArchiveError) -> [SubscriptionRequestRow] {
        try withDatabase { database throws(SQLiteError) in
            try ContactsQuery.subscriptionEvents(database, account: account, pendingIncomingOnly: false)
        }
    }

    /// A contact's presence changes, newest first; `limit` 0 means all.
    public func presenceHistory(account: String, contact: String, limit: Int = 0) throws(ArchiveError) -> [PresenceRow] {
        try withDatabase { database throws(SQLiteError) in
            try ContactsQuery.presenceHistory(database, account: account, contact: contact, limit: limit)
        }
    }

    /// When each contact (lower-cased bare JID) was last seen available; contacts never seen are absent.
    public func lastSeen(account: String) throws(ArchiveError) -> [String: Int64] {
        try withDatabase { database throws(SQLiteError) in
            try ContactsQuery.lastSeen(database, account: account)
        }
    }

    /// The newest stored presence of each resource of each contact.
    public func latestPresence(account: String) throws(ArchiveError) -> [PresenceRow] {
        try withDatabase { database throws(SQLiteError) in
            try ContactsQuery.latestPresence(database, account: account)
        }
    }
}
