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
