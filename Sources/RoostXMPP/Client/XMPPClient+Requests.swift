import RoostCore

/// Sending, requests and their answers, archive pages.
extension XMPPClient {
    // MARK: - Sending

    /// Queues a stanza for the writer; with stream management it is kept until the server acknowledges it.
    /// `tracking` names it in `.acknowledged`/`.unconfirmed` events (an outgoing message's origin-id).
    /// Throws `.stanzaTooLarge` above `outboundStanzaLimit`, `.outboundQueueFull` when the server is not
    /// taking what was sent, `.notConnected` between connections.
    public func send(_ stanza: some Stanza, tracking: String? = nil) throws(ClientError) {
        try enqueue(stanza.element, tracking: tracking, checkingSize: true)
    }

    /// Serialises and queues under the client's lock, so the order of the stream-management queue (the messages to
    /// its owner, the reader) is the order of the wire.
    func enqueue(_ element: Element, tracking: String?, checkingSize: Bool) throws(ClientError) {
        let text = XMLSerializer.serialize(element, parentNamespace: Namespace.client)
        let bytes = Array(text.utf8)
        if checkingSize {
            let limit = outboundStanzaLimit
            if bytes.count > limit { throw .stanzaTooLarge(bytes: bytes.count, limit: limit) }
        }
        let mailbox = streamManagement.mailbox
        let refused = try state.withLock { s throws(ClientError) -> (count: Int, bytes: Int)? in
            guard let c = s.connection, !s.closing else { throw .notConnected }
            guard mailbox.isEnabled else {
                guard c.outbox.enqueue(bytes) else { throw c.outbox.isClosed ? .notConnected : .outboundQueueFull }
                return nil
            }
            // The stream-management queue keeps what the server has not acknowledged: bounded (see `OutboundQueue`).
            // The stanza goes to the reader that keeps it (`postSent`) in the order of the write queue.
            if let held = mailbox.unacknowledgedBytes(ifNoRoomFor: bytes.count) {
                s.refusedUnacknowledged += 1
                return (s.refusedUnacknowledged, held)
            }
            guard c.outbox.enqueue(bytes) else { throw c.outbox.isClosed ? .notConnected : .outboundQueueFull }
            mailbox.postSent(OutboundQueue.Entry(element: element, tracking: tracking, bytes: bytes.count))
            return nil
        }
        if let refused {
            // Counted, and logged the first time and every hundredth, not once per refused stanza.
            if refused.count == 1 || refused.count % 100 == 0 {
                log(.warning, "\(configuration.jid): not sending (\(refused.count) stanzas refused on this connection): the server has not acknowledged the last \(refused.bytes) bytes Roost sent, and at most \(OutboundQueue.capacityBytes) are kept for a resumption")
            }
            throw .outboundQueueFull
        }
    }

    func rawSend(_ element: Element) throws(ClientError) {
        guard let connection = state.withLock({ $0.connection }) else { throw .notConnected }
        try connection.send(XMLSerializer.serialize(element, parentNamespace: Namespace.client))
    }

    /// Sends an IQ request and waits for its answer; a `type='error'` answer throws `.stanzaError`.
    public func request(_ iq: IQ, timeout: Duration? = nil) async throws(ClientError) -> IQ {
        var iq = iq
        let id = iq.id ?? StanzaID.make()
        iq.id = id
        let expectedFrom = iq.to
        let limit = timeout ?? configuration.requestTimeout
        let what = "an answer to \(iq.payload?.name ?? "iq") from \(expectedFrom?.description ?? "the server")"
        let outgoing = iq
        let answer: IQ
        do {
            answer = try await withCheckedThrowingContinuation { (c: CheckedContinuation<IQ, any Error>) in
                let registered = state.withLock { s -> Bool in
                    guard s.connection != nil, !s.closing else { return false }
                    s.pending[id] = PendingRequest(expectedFrom: expectedFrom, continuation: c)
                    return true
                }
                guard registered else {
                    c.resume(throwing: ClientError.notConnected)
                    return
                }
                do { try send(outgoing) } catch {
                    if let p = state.withLock({ $0.pending.removeValue(forKey: id) }) { p.continuation.resume(throwing: error) }
                    return
                }
                let timer = Task { [weak self] in
                    do { try await Task.sleep(for: limit) } catch { return }
                    if let p = self?.state.withLock({ $0.pending.removeValue(forKey: id) }) {
                        p.continuation.resume(throwing: ClientError.timeout(what))
                    }
                }
                // Answered already (a fast server): its deadline goes at once.
                let kept = state.withLock { s -> Bool in
                    guard s.pending[id] != nil else { return false }
                    s.pending[id]?.timer = timer
                    return true
                }
                if !kept { timer.cancel() }
            }
        } catch let error as ClientError {
            throw error
        } catch {
            throw .disconnected(String(describing: error))
        }
        if answer.type == .error {
            throw .stanzaError(answer.error ?? StanzaError(type: "cancel", condition: "undefined-condition"))
        }
        return answer
    }

    /// Runs one XEP-0313 query page. Its `<result/>` messages are collected instead of going to `events`
    /// one by one, and delivered as one `.archivePage` event where the answer arrived in the stream (so the
    /// layer above archives them in order with live traffic). Returns the answer (`<fin/>`). Validating each
    /// result (its `from`, its query id) is the caller's job.
    public func queryArchive(_ iq: IQ, queryID: String, timeout: Duration? = nil) async throws(ClientError) -> IQ {
        var iq = iq
        let id = iq.id ?? StanzaID.make()
        iq.id = id
        let limit = MAM.pageSize(of: iq)
        try state.withLock { s throws(ClientError) in
            do throws(ArchiveCollector.OpenError) { try s.archive.open(queryID: queryID, iqID: id, limit: limit) } catch {
                guard case .tooMany(let open) = error else { return }
                throw .protocolViolation("\(open) archive queries are open already (at most \(ArchiveCollector.maxOpenQueries))")
            }
        }
        do {
            return try await request(iq, timeout: timeout)
        } catch {
            state.withLock { _ = $0.archive.close(iqID: id) }
            throw error
        }
    }

    /// The MAM module's handler: keeps a `<result/>` of an open query for its page; false when no open query has
    /// its id (it goes to `events`, where the layer above refuses it as unsolicited). A result beyond the page size
    /// the query asked for fails the query, and the rest of that page goes to `events` too.
    func collectArchiveResult(_ element: Element) -> Bool {
        guard let queryID = element.child("result", namespace: Namespace.mam)?[attribute: "queryid"] else { return false }
        let (taken, request) = state.withLock { s -> (ArchiveCollector.Taken, PendingRequest?) in
            let taken = s.archive.take(element, queryID: queryID)
            guard case .overflow(let iqID, _) = taken else { return (taken, nil) }
            return (taken, s.pending.removeValue(forKey: iqID))
        }
        switch taken {
        case .collected: return true
        case .notOpen: return false
        case .overflow(_, let limit):
            let text = "the server archive sent more than the \(limit) results asked for in one page (query \(LogText.quote(queryID)))"
            log(.warning, "\(configuration.jid): \(text)")
            request?.timer?.cancel()
            request?.continuation.resume(throwing: ClientError.protocolViolation(text))
            return false
        }
    }

    // MARK: - Answers

    /// An answer (`result`, `error`): resolves its request when it comes from where the request went. The answer
    /// to an archive query first puts the query's page on `events`, in stream order, acknowledged with the answer.
    func answered(_ iq: IQ, acknowledgement: Acknowledgement) {
        let id = iq.id ?? ""
        let account = configuration.jid
        let (request, page) = state.withLock { s -> (PendingRequest?, ArchivePage?) in
            guard let p = s.pending[id], Self.answer(from: iq.from, fromAttribute: iq.fromAttribute, matches: p.expectedFrom, account: account,
                                                     bound: s.boundJID) else { return (nil, nil) }
            s.pending[id] = nil
            let page = s.archive.close(iqID: id).map {
                ArchivePage(queryID: $0.queryID, results: $0.results, fin: iq, acknowledgement: acknowledgement)
            }
            return (p, page)
        }
        if let page {
            // In stream order, before the requester learns the query finished.
            events.put(.archivePage(page))
        } else {
            markHandled(acknowledgement.sequence)
        }
        if let request {
            request.timer?.cancel()
            request.continuation.resume(returning: iq)
        } else {
            log(.debug, "\(configuration.jid): dropping an IQ answer nobody asked for (id \(LogText.quote(id)), from \(LogText.quote(iq.fromAttribute ?? "-")))")
        }
    }

    /// RFC 6120 §8.1.2.1 and §10.1.1: an answer must come from where the request went; a request without
    /// `to` went to the account, so its answer may carry no `from`, the bare JID, or the full JID. A request
    /// to the account's server may also be answered from this very session's full JID (`bound`): ejabberd
    /// answers an XEP-0077 account removal that way, and only the server can send from that address.
    static func answer(from: JID?, fromAttribute: String?, matches expected: JID?, account: JID, bound: JID? = nil) -> Bool {
        if let expected, let from, let bound, expected == JID(parsing: account.domain), from == bound { return true }
        guard let expected else {
            guard let fromAttribute else { return true }
            guard let from = JID(parsing: fromAttribute) else { return false }
            return from.bare == account.bare || from == JID(parsing: account.domain)
        }
        if fromAttribute == nil { return expected == account.bare || expected == JID(parsing: account.domain) }
        guard let from else { return false }
        return from == expected
    }
}
