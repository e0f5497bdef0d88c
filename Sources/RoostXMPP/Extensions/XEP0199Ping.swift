/// XEP-0199 XMPP Ping: a round trip that proves the stream is alive.
public enum Ping {
    public static func request(to: JID?) -> IQ {
        IQ(type: .get, to: to, payload: Element("ping", namespace: Namespace.ping))
    }

    public static func isPing(_ iq: IQ) -> Bool {
        iq.type == .get && iq.payload?.name == "ping" && iq.payload?.namespace == Namespace.ping
    }
}
