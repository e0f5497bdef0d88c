/// XEP-0313 Message Archive Management: paging through the server's copy of the account's history.
public enum MAM {
    public static let namespace = Namespace.mam

    /// A query for messages after `afterID` (RSM `<after/>`), or after `start`, in pages of `pageSize`.
    public static func query(queryID: String, afterID: String? = nil, start: String? = nil, end: String? = nil,
                             with: JID? = nil, pageSize: Int = 250, to archive: JID? = nil) -> IQ {
        var query = Element("query", namespace: namespace, attributes: [("queryid", queryID)])
        var fields: [(String, String)] = []
        if let start { fields.append(("start", start)) }
        if let end { fields.append(("end", end)) }
        if let with { fields.append(("with", with.description)) }
        if !fields.isEmpty {
            var form = Element("x", namespace: Namespace.dataForms, attributes: [("type", "submit")])
            form.append(Element("field", namespace: Namespace.dataForms, attributes: [("var", "FORM_TYPE"), ("type", "hidden")],
                                children: [.element(Element("value", namespace: Namespace.dataForms, text: namespace))]))
            for (name, value) in fields {
                form.append(Element("field", namespace: Namespace.dataForms, attributes: [("var", name)],
                                    children: [.element(Element("value", namespace: Namespace.dataForms, text: value))]))
            }
            query.append(form)
        }
        var set = Element("set", namespace: Namespace.rsm)
        set.append(Element("max", namespace: Namespace.rsm, text: String(pageSize)))
        if let afterID { set.append(Element("after", namespace: Namespace.rsm, text: afterID)) }
        query.append(set)
        return IQ(type: .set, to: archive, payload: query)
    }

    public struct Result: Sendable {
        public var queryID: String
        public var archiveID: String
        /// The archived message as it was sent, its own `<delay/>` (if any, the sender's claim) untouched.
        public var message: Message
        /// The archive's time of the message (the `<forwarded/>` wrapper's `<delay/>`), UTC milliseconds.
        public var stamp: Int64?
    }

    /// Unwraps a `<result/>` message, accepting it only from the queried archive (CVE-2019-16237 class):
    /// `from` must be the archive's JID, or absent for the account's own archive (`fromRequired` false) — a
    /// room's archive always names itself.
    public static func result(in message: Message, archive: JID, fromRequired: Bool = false) -> Result? {
        guard let result = message.element.child("result", namespace: namespace),
              let queryID = result[attribute: "queryid"], let id = result[attribute: "id"],
              let forwarded = result.child("forwarded", namespace: Namespace.forward) else { return nil }
        if let from = message.fromAttribute {
            guard let jid = JID(parsing: from), jid == archive.bare else { return nil }
        } else if fromRequired {
            return nil
        }
        let inner = forwarded.children("message", namespace: Namespace.client)
        guard inner.count == 1 else { return nil }
        return Result(queryID: queryID, archiveID: id, message: Message(inner[0]), stamp: Delay.milliseconds(of: forwarded))
    }

    public static func isResult(_ message: Message) -> Bool {
        message.element.child("result", namespace: namespace) != nil
    }

    public struct Fin: Sendable {
        public var complete: Bool
        public var first: String?
        public var last: String?
        public var count: Int?
    }

    public static func fin(in iq: IQ) -> Fin? {
        guard let fin = iq.element.child("fin", namespace: namespace) else { return nil }
        let set = fin.child("set", namespace: Namespace.rsm)
        return Fin(complete: fin[attribute: "complete"] == "true",
                   first: set?.child("first", namespace: Namespace.rsm)?.text,
                   last: set?.child("last", namespace: Namespace.rsm)?.text,
                   count: set?.child("count", namespace: Namespace.rsm).flatMap { Int($0.text) })
    }
}

extension MAM {
    /// Collects the `<result/>` messages of open queries (`XMPPClient.queryArchive`) instead of passing them up one
    /// by one; the page goes to `events` where the query's answer arrives (`XMPPClient.answered`).
    static let module = ClientModule(name: "XEP-0313 Message Archive Management", features: [], handlers: [
        .message(childNamespace: namespace) { element, _, client in client.collectArchiveResult(element) },
    ])

    /// The RSM `<max/>` a query asks for: the most results one page may hold.
    static func pageSize(of query: IQ) -> Int? {
        query.payload?.child("set", namespace: Namespace.rsm)?.child("max", namespace: Namespace.rsm).flatMap { Int($0.text) }
    }
}

/// The open XEP-0313 queries of one connection and the results collected for each until its answer arrives.
///
/// Bounded: a query collects at most the page size it asked for (its RSM `<max/>`, `defaultLimit` without one):
/// XEP-0059 §2.1 forbids the server to return more, and one result more fails the query (`take` says so; the
/// client fails the request and logs it) instead of growing the page. The number of open queries is bounded by
/// their callers, each awaiting its page (the agent's catch-up reads one page per archive at a time), and at most
/// `maxOpenQueries`: `open` refuses more.
struct ArchiveCollector: Sendable {
    static let defaultLimit = 1000
    static let maxOpenQueries = 64

    private struct Query: Sendable {
        let iqID: String
        let limit: Int
        var results: [Element] = []
    }
    /// By query id.
    private var queries: [String: Query] = [:]
    /// The query id of each open query's IQ.
    private var queryIDs: [String: String] = [:]

    var openCount: Int { queries.count }

    enum OpenError: Error { case tooMany(Int) }

    mutating func open(queryID: String, iqID: String, limit: Int?) throws(OpenError) {
        guard queries.count < Self.maxOpenQueries else { throw .tooMany(queries.count) }
        queries[queryID] = Query(iqID: iqID, limit: limit ?? Self.defaultLimit)
        queryIDs[iqID] = queryID
    }

    enum Taken: Equatable {
        /// Kept for its page.
        case collected
        /// No open query has this id: the result is not the collector's.
        case notOpen
        /// The query already holds `limit` results: it is closed, and its IQ (`iqID`) must fail.
        case overflow(iqID: String, limit: Int)
    }

    mutating func take(_ result: Element, queryID: String) -> Taken {
        guard var query = queries[queryID] else { return .notOpen }
        guard query.results.count < query.limit else {
            close(iqID: query.iqID)
            return .overflow(iqID: query.iqID, limit: query.limit)
        }
        query.results.append(result)
        queries[queryID] = query
        return .collected
    }

    /// The query answered by the IQ `iqID` and its results, leaving it closed; nil when the IQ is no open query's.
    @discardableResult
    mutating func close(iqID: String) -> (queryID: String, results: [Element])? {
        guard let queryID = queryIDs.removeValue(forKey: iqID), let query = queries.removeValue(forKey: queryID) else { return nil }
        return (queryID, query.results)
    }

    mutating func removeAll() {
        queries.removeAll()
        queryIDs.removeAll()
    }
}
