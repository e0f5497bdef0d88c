/// XEP-0199 XMPP Ping: a round trip that proves the stream is alive.
public enum Ping {
    public static func request(to: JID?) -> IQ {
        IQ(type: .get, to: to, payload: Element("ping", namespace: Namespace.ping))
    }

    public static func isPing(_ iq: IQ) -> Bool {
        iq.type == .get && iq.payload?.name == "ping" && iq.payload?.namespace == Namespace.ping
    }
}

extension Ping {
    /// Answers a ping (`get`) with an empty result.
    static let module = ClientModule(name: "XEP-0199 XMPP Ping", features: [Namespace.ping], handlers: [
        .request(namespace: Namespace.ping) { iq, _ in isPing(iq) ? .answer(iq.result()) : .unsupported },
    ])
}
