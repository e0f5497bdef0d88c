/// One protocol extension as the client implements it, declared in one place — the XEP's own file — like Dino's
/// xmpp-vala modules or ejabberd's gen_mod: the disco#info features it stands for and the inbound elements it
/// handles. `XMPPClient` registers the built-in modules (`ClientModule.builtIn`) and those its configuration adds
/// (what the layers above implement); its disco#info answer and entity caps are built from them, and its reader
/// routes requests, stream-level elements and archive results to them instead of deciding in switches of its own.
public struct ClientModule: Sendable {
    /// The specification, for logs and documentation ("XEP-0199 XMPP Ping").
    public let name: String
    /// What it advertises in disco#info (and so in entity caps).
    public let features: [String]
    let handlers: [Handler]

    /// A module the layer above implements: the engine only advertises its features.
    public init(name: String, features: [String]) {
        self.init(name: name, features: features, handlers: [])
    }

    init(name: String, features: [String], handlers: [Handler]) {
        self.name = name
        self.features = features
        self.handlers = handlers
    }

    /// What a module takes from the stream, by namespace.
    enum Handler: Sendable {
        /// Inbound `get`/`set` requests whose payload is in `namespace`; on the reader thread, in stream order.
        case request(namespace: String, @Sendable (IQ, XMPPClient) -> RequestOutcome)
        /// Stream-level elements in `namespace` (XEP-0198's `<r/>` and `<a/>`): not stanzas, so never counted.
        case nonza(namespace: String, @Sendable (Element, XMPPClient, _ generation: Int) -> Void)
        /// Messages with a child in `namespace`; the handler returns true when it took the message (it does not
        /// reach `events`: the module delivers it its own way).
        case message(childNamespace: String, @Sendable (Element, Acknowledgement, XMPPClient) -> Bool)
    }

    /// What became of an inbound request.
    enum RequestOutcome: Sendable {
        /// The engine answers it at once (it is handled).
        case answer(IQ)
        /// The layer above handles it (a roster push): it goes to `events` and is acknowledged after its commit.
        case deliver
        /// Not one this module answers: `service-unavailable`, as for a namespace nobody registered.
        case unsupported
    }

    /// What every Roost login implements and advertises: disco#info and entity caps, ping, software version,
    /// stream management, archive paging, roster pushes, and chat states (advertised by every login since the
    /// first version, one-shot CLI logins too: their entity caps hash must not change).
    static let builtIn: [ClientModule] = [Disco.module, EntityCapabilities.module, Ping.module, SoftwareVersion.module,
                                          StreamManagement.module, MAM.module, Roster.module, ChatState.module]
}

/// The handlers of the registered modules, by what they take; built once per client.
struct ModuleRoutes: Sendable {
    let features: Set<String>
    private var requests: [String: @Sendable (IQ, XMPPClient) -> ClientModule.RequestOutcome] = [:]
    private var nonzas: [String: @Sendable (Element, XMPPClient, Int) -> Void] = [:]
    private var messages: [(namespace: String, take: @Sendable (Element, Acknowledgement, XMPPClient) -> Bool)] = []

    init(_ modules: [ClientModule]) {
        features = Set(modules.flatMap(\.features))
        for module in modules {
            for handler in module.handlers {
                switch handler {
                case .request(let namespace, let answer):
                    precondition(requests[namespace] == nil, "two modules answer requests in \(namespace)")
                    requests[namespace] = answer
                case .nonza(let namespace, let handle):
                    precondition(nonzas[namespace] == nil, "two modules handle \(namespace)")
                    nonzas[namespace] = handle
                case .message(let namespace, let take):
                    messages.append((namespace, take))
                }
            }
        }
    }

    func nonza(_ namespace: String?) -> (@Sendable (Element, XMPPClient, Int) -> Void)? {
        namespace.flatMap { nonzas[$0] }
    }

    func request(_ iq: IQ, client: XMPPClient) -> ClientModule.RequestOutcome {
        guard let namespace = iq.payload?.namespace, let answer = requests[namespace] else { return .unsupported }
        return answer(iq, client)
    }

    /// Offers a message to the modules that take messages with a child in their namespace; true when one took it.
    func take(message element: Element, acknowledgement: Acknowledgement, client: XMPPClient) -> Bool {
        for (namespace, take) in messages where element.childElements.contains(where: { $0.namespace == namespace }) {
            if take(element, acknowledgement, client) { return true }
        }
        return false
    }
}
