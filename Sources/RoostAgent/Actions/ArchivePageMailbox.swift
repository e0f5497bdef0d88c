import RoostXMPP

/// Hands the archive pages a client delivers on its event stream to whoever ran the query.
///
/// `XMPPClient.queryArchive` returns the `<fin/>` only after it has put the page on `events`, so a page is
/// always delivered (or the stream closed) before `take` for its query id can wait forever.
actor ArchivePageMailbox {
    private var pages: [String: ArchivePage] = [:]
    private var waiters: [String: CheckedContinuation<ArchivePage?, Never>] = [:]
    private var closed = false

    func deliver(_ page: ArchivePage) {
        if let waiter = waiters.removeValue(forKey: page.queryID) {
            waiter.resume(returning: page)
        } else {
            pages[page.queryID] = page
        }
    }

    /// The connection ended: nobody waits for a page that will not come.
    func close() {
        closed = true
        for waiter in waiters.values { waiter.resume(returning: nil) }
        waiters.removeAll()
    }

    func take(_ queryID: String) async -> ArchivePage? {
        if let page = pages.removeValue(forKey: queryID) { return page }
        if closed { return nil }
        return await withCheckedContinuation { waiters[queryID] = $0 }
    }
}
