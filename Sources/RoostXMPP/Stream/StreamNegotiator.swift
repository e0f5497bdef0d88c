import Foundation

/// What a finished negotiation established.
struct NegotiationResult: Sendable {
    var boundJID: JID
    var authentication: StreamNegotiator.Authentication
    var streamManagement: StreamManagementOutcome
    /// Features of the authenticated stream (roster versioning, SM, …).
    var features: Element
    /// Stanzas that arrived while negotiating (after bind), in order; delivered before anything else.
    var earlyStanzas: [EarlyStanza]
    /// What the account's server supports (disco#info of the bare JID), asked as the last step so that
    /// the layer above knows it before the first stanza; nil when not asked or the server did not answer.
    var accountFeatures: Set<String>? = nil

    /// Stanzas the negotiator sent after stream management was enabled or resumed (the account disco#info):
    /// the server counts them, so the client's outbound count must too.
    var countedStanzas: [Element] = []

    /// XEP-0478: the largest stanza the server accepts from us, when it says so.
    var maxStanzaBytes: Int? {
        features.child("limits", namespace: Namespace.streamLimits)?.child("max-bytes", namespace: Namespace.streamLimits)
            .flatMap { Int($0.text.trimmingCharacters(in: .whitespaces)) }
    }
}

/// A stanza that arrived during negotiation, and whether the server counts it for stream management.
enum EarlyStanza: Sendable {
    /// Arrived before stream management was on (the server does not count it).
    case uncounted(Element)
    /// Arrived with stream management on.
    case counted(Element)
    /// The answer to a request the negotiator made itself and consumed (counted, and handled).
    case answered
}

enum StreamManagementOutcome: Sendable, Equatable {
    case unavailable
    case enabled(id: String?, resumable: Bool, location: String?, maxSeconds: Int?)
    /// A previous session continued: the server has handled `serverHandled` of our stanzas.
    case resumed(id: String, serverHandled: UInt32)
    case enableFailed

    /// Whether the server now counts the stanzas we send.
    var isActive: Bool {
        switch self {
        case .enabled, .resumed: true
        case .unavailable, .enableFailed: false
        }
    }
}

/// Runs RFC 6120 stream negotiation over a `StreamChannel`: stream header, STARTTLS (mandatory),
/// optional in-band registration, SASL, stream restart, then SM resume or bind + SM enable.
///
/// Written as straight-line blocking code on the connection's own thread: negotiation is strictly
/// sequential, and this keeps each step readable next to the RFC section it implements.
struct StreamNegotiator {
    enum Purpose: Sendable {
        case login
        /// XEP-0077 §3.1: register the account on the TLS-secured stream, then log in with it.
        case registerThenLogin(extraFields: [String: String])
    }

    let jid: JID
    let password: String
    let resource: String
    let purpose: Purpose
    let streamManagement: Bool
    let resumption: StreamResumptionState?
    let stepTimeout: Duration
    var allowedMechanisms: [String]? = nil
    /// Ask the server what the account supports (MAM, stanza-ids) before handing the session over.
    var discoverAccount = false

    func run(on channel: StreamChannel) throws(ClientError) -> NegotiationResult {
        var features = try openStream(on: channel)
        if !channel.isTLSActive {
            guard features.child("starttls", namespace: Namespace.tls) != nil else { throw .tlsNotOffered(server: jid.domain) }
            try channel.send(XMLSerializer.serialize(Element("starttls", namespace: Namespace.tls)))
            let answer = try nextStanza(on: channel, waitingFor: "the answer to STARTTLS")
            guard answer.name == "proceed", answer.namespace == Namespace.tls else {
                throw .protocolViolation("the server refused STARTTLS (\(answer.name))")
            }
            try channel.startTLS()
            features = try openStream(on: channel)
        }
        if case .registerThenLogin(let extra) = purpose {
            try register(on: channel, features: features, extraFields: extra)
        }
        let authentication = try authenticate(on: channel, features: features)
        channel.restartStream()
        features = try openStream(on: channel)

        var result: NegotiationResult
        if streamManagement, let resumption, features.child("sm", namespace: Namespace.streamManagement) != nil,
           let resumed = try resume(on: channel, state: resumption) {
            result = NegotiationResult(boundJID: resumed.jid, authentication: authentication, streamManagement: resumed.outcome,
                                       features: features, earlyStanzas: [])
        } else {
            // What arrives before <enabled/> is not counted by the server; it must not be by us either.
            var uncounted: [Element] = []
            let bound = try bind(on: channel, features: features, early: &uncounted)
            var sm = StreamManagementOutcome.unavailable
            if streamManagement, features.child("sm", namespace: Namespace.streamManagement) != nil {
                sm = try enableStreamManagement(on: channel, early: &uncounted)
            }
            result = NegotiationResult(boundJID: bound, authentication: authentication, streamManagement: sm, features: features,
                                       earlyStanzas: uncounted.map { .uncounted($0) })
        }
        if discoverAccount {
            let request = Disco.infoRequest(to: jid.bare)
            let counted = result.streamManagement.isActive
            if counted { result.countedStanzas.append(request.element) }
            var early: [Element] = []
            result.accountFeatures = try discoverFeatures(request, on: channel, early: &early)
            // The answer came after these; the server counts all of them once stream management is on.
            result.earlyStanzas += early.map { counted ? .counted($0) : .uncounted($0) }
            if counted { result.earlyStanzas.append(.answered) }
        }
        return result
    }

    /// disco#info of the account (XEP-0030); an error answer means "nothing special", a timeout nil.
    private func discoverFeatures(_ request: IQ, on channel: StreamChannel, early: inout [Element]) throws(ClientError) -> Set<String>? {
        let answer: IQ
        do { answer = try iq(request, on: channel, early: &early) } catch .timeout { return nil }
        return Disco.info(in: answer)?.features ?? []
    }

    // MARK: - Stream header and features (RFC 6120 §4.2, §4.3)

    private func openStream(on channel: StreamChannel) throws(ClientError) -> Element {
        // RFC 6120 §4.7.1: include `from` only once the stream is protected, so the JID is not leaked in clear.
        let from = channel.isTLSActive ? " from='\(XMLSerializer.escapeAttribute(jid.bare.description))'" : ""
        try channel.send("<?xml version='1.0'?><stream:stream to='\(XMLSerializer.escapeAttribute(jid.domain))'\(from) version='1.0' xml:lang='en' xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'>")
        let header = try channel.nextEvent(timeout: stepTimeout)
        guard case .streamStart(let root) = header else {
            throw .protocolViolation("expected the server's stream header")
        }
        guard root[attribute: "version"].map({ $0.hasPrefix("1.") }) ?? false else {
            throw .protocolViolation("the server does not speak XMPP 1.0 (version \(root[attribute: "version"] ?? "missing"))")
        }
        let features = try nextStanza(on: channel, waitingFor: "stream features")
        guard features.name == "features", features.namespace == Namespace.stream else {
            throw .protocolViolation("expected stream features, got <\(features.name)/>")
        }
        return features
    }

    /// The next top-level element; stream errors and stream end become errors.
    private func nextStanza(on channel: StreamChannel, waitingFor what: String) throws(ClientError) -> Element {
        let event: XMLStreamParser.Event
        do { event = try channel.nextEvent(timeout: stepTimeout) } catch .timeout { throw .timeout(what) }
        switch event {
        case .stanza(let element):
            if element.name == "error", element.namespace == Namespace.stream { throw StreamErrorReader.error(from: element) }
            return element
        case .streamEnd: throw .disconnected("the server closed the stream while Roost was waiting for \(what)")
        case .streamStart: throw .protocolViolation("unexpected stream header while waiting for \(what)")
        }
    }

    // MARK: - In-band registration (XEP-0077 §3.1)

    private func register(on channel: StreamChannel, features: Element, extraFields: [String: String]) throws(ClientError) {
        var early: [Element] = []
        let form = try iq(Registration.fieldsRequest(), on: channel, early: &early)
        if form.type == .error {
            throw .registrationFailed(form.error ?? StanzaError(type: "cancel", condition: "service-unavailable"))
        }
        let request = Registration.registerRequest(username: jid.localpart ?? "", password: password, extra: extraFields)
        let answer = try iq(request, on: channel, early: &early)
        if answer.type != .result {
            throw .registrationFailed(answer.error ?? StanzaError(type: "cancel", condition: "undefined-condition"))
        }
    }

    // MARK: - SASL (RFC 6120 §6)

    /// The mechanism that authenticated and the channel-binding type it used, if any.
    struct Authentication: Sendable {
        var mechanism: String
        var channelBinding: String?
    }

    private func authenticate(on channel: StreamChannel, features: Element) throws(ClientError) -> Authentication {
        let offered = features.child("mechanisms", namespace: Namespace.sasl)?
            .children("mechanism", namespace: Namespace.sasl).map(\.text) ?? []
        let bindingTypes = features.child("sasl-channel-binding", namespace: Namespace.saslChannelBinding)?
            .children("channel-binding", namespace: Namespace.saslChannelBinding).compactMap { $0[attribute: "type"] }
        let plan: SASLMechanismSelector.Plan
        do {
            plan = try SASLMechanismSelector.plan(offered: offered, allowed: allowedMechanisms.map(Set.init), tlsActive: channel.isTLSActive,
                                                  serverBindingTypes: bindingTypes, availableBindings: channel.channelBindings(),
                                                  username: jid.localpart ?? "", password: password)
        } catch { throw .sasl(error) }
        do {
            return try exchange(plan.first, on: channel)
        } catch .authenticationFailed where plan.fallback != nil {
            // The -PLUS attempt used a binding type the server never listed; it may support another one only.
            // A wrong password fails the second attempt too, and that failure is the one reported.
            return try exchange(plan.fallback!, on: channel)
        }
    }

    /// One SASL exchange (RFC 6120 §6.4): `<auth/>`, challenges and responses, then success or failure.
    private func exchange(_ mechanism: any SASLMechanism, on channel: StreamChannel) throws(ClientError) -> Authentication {
        let initial: [UInt8]
        do { initial = try mechanism.initialResponse() } catch { throw .sasl(error) }
        var auth = Element("auth", namespace: Namespace.sasl, attributes: [("mechanism", mechanism.name)])
        auth.append(text: initial.isEmpty ? "=" : Data(initial).base64EncodedString())
        try channel.send(XMLSerializer.serialize(auth))
        while true {
            let answer = try nextStanza(on: channel, waitingFor: "the SASL exchange")
            guard answer.namespace == Namespace.sasl else { throw .protocolViolation("unexpected <\(answer.name)/> during SASL") }
            switch answer.name {
            case "challenge":
                let challenge = try decodeBase64(answer.text)
                let response: [UInt8]
                do { response = try mechanism.respond(to: challenge) } catch {
                    try? channel.send(XMLSerializer.serialize(Element("abort", namespace: Namespace.sasl)))
                    throw .sasl(error)
                }
                let text = response.isEmpty ? "" : Data(response).base64EncodedString()
                try channel.send(XMLSerializer.serialize(Element("response", namespace: Namespace.sasl, text: text)))
            case "success":
                let text = answer.text
                let data: [UInt8]? = (text.isEmpty || text == "=") ? nil : try decodeBase64(text)
                do { try mechanism.verifySuccess(data) } catch { throw .sasl(error) }
                return Authentication(mechanism: mechanism.name, channelBinding: mechanism.channelBindingType)
            case "failure":
                let condition = answer.childElements.first { $0.name != "text" }?.name ?? "not-authorized"
                let text = answer.child("text", namespace: Namespace.sasl)?.text
                throw .authenticationFailed(condition: condition, text: (text?.isEmpty ?? true) ? nil : text)
            default:
                throw .protocolViolation("unexpected <\(answer.name)/> during SASL")
            }
        }
    }

    private func decodeBase64(_ text: String) throws(ClientError) -> [UInt8] {
        let trimmed = text.filter { !$0.isWhitespace }
        if trimmed.isEmpty || trimmed == "=" { return [] }
        guard let data = Data(base64Encoded: trimmed) else { throw .protocolViolation("the server sent invalid base64 in SASL") }
        return Array(data)
    }

    // MARK: - Resource binding (RFC 6120 §7) and session

    private func bind(on channel: StreamChannel, features: Element, early: inout [Element]) throws(ClientError) -> JID {
        guard features.child("bind", namespace: Namespace.bind) != nil else { throw .bindFailed("the server offers no resource binding") }
        var attempt = resource
        for round in 0..<3 {
            var bindElement = Element("bind", namespace: Namespace.bind)
            bindElement.append(Element("resource", namespace: Namespace.bind, text: attempt))
            let answer = try iq(IQ(type: .set, payload: bindElement), on: channel, early: &early)
            if answer.type == .result,
               let text = answer.element.child("bind", namespace: Namespace.bind)?.child("jid", namespace: Namespace.bind)?.text,
               let bound = JID(parsing: text), bound.resource != nil {
                try establishSessionIfRequired(on: channel, features: features, early: &early)
                return bound
            }
            let error = answer.error
            // RFC 6120 §7.7.2.2: on a resource conflict, pick another one rather than failing.
            if error?.condition == "conflict", round < 2 {
                attempt = "\(resource).\(String(UInt32.random(in: 0...UInt32.max), radix: 36))"
                continue
            }
            throw .bindFailed(error?.description ?? "no JID in the answer")
        }
        throw .bindFailed("resource conflict")
    }

    /// RFC 3921 sessions are obsolete; only establish one where the server still insists (no `<optional/>`).
    private func establishSessionIfRequired(on channel: StreamChannel, features: Element, early: inout [Element]) throws(ClientError) {
        guard let session = features.child("session", namespace: Namespace.session),
              session.child("optional", namespace: Namespace.session) == nil else { return }
        let answer = try iq(IQ(type: .set, payload: Element("session", namespace: Namespace.session)), on: channel, early: &early)
        if answer.type != .result { throw .bindFailed("session establishment failed: \(answer.error?.description ?? "?")") }
    }

    // MARK: - Stream management (XEP-0198)

    private func enableStreamManagement(on channel: StreamChannel, early: inout [Element]) throws(ClientError) -> StreamManagementOutcome {
        try channel.send(XMLSerializer.serialize(StreamManagement.enable(resume: true)))
        while true {
            let answer = try nextStanza(on: channel, waitingFor: "stream management to be enabled")
            guard answer.namespace == Namespace.streamManagement else {
                early.append(answer)
                continue
            }
            switch answer.name {
            case "enabled":
                let resumable = answer[attribute: "resume"] == "true" || answer[attribute: "resume"] == "1"
                return .enabled(id: answer[attribute: "id"], resumable: resumable, location: answer[attribute: "location"],
                                maxSeconds: answer[attribute: "max"].flatMap { Int($0) })
            case "failed": return .enableFailed
            default: throw .protocolViolation("unexpected <\(answer.name)/> while enabling stream management")
            }
        }
    }

    private func resume(on channel: StreamChannel, state: StreamResumptionState) throws(ClientError) -> (jid: JID, outcome: StreamManagementOutcome)? {
        try channel.send(XMLSerializer.serialize(StreamManagement.resume(previousID: state.id, handled: state.inboundHandled)))
        let answer = try nextStanza(on: channel, waitingFor: "the answer to stream resumption")
        guard answer.namespace == Namespace.streamManagement else { throw .protocolViolation("unexpected <\(answer.name)/> while resuming") }
        switch answer.name {
        case "resumed":
            guard let h = StreamManagement.handledCount(in: answer) else { throw .protocolViolation("<resumed/> without h") }
            // The resumed session keeps the full JID it had; it is the account's, with our resource.
            let jid = (try? self.jid.with(resource: resource)) ?? self.jid
            return (jid, .resumed(id: state.id, serverHandled: h))
        case "failed":
            return nil
        default:
            throw .protocolViolation("unexpected <\(answer.name)/> while resuming")
        }
    }

    // MARK: - IQ during negotiation

    /// Sends an IQ and waits for its answer by id; other stanzas that arrive meanwhile are kept for later.
    private func iq(_ request: IQ, on channel: StreamChannel, early: inout [Element]) throws(ClientError) -> IQ {
        try channel.send(XMLSerializer.serialize(request.element, parentNamespace: Namespace.client))
        while true {
            let element = try nextStanza(on: channel, waitingFor: "an answer to <iq id='\(request.id ?? "")'/>")
            if element.name == "iq", element[attribute: "id"] == request.id,
               ["result", "error"].contains(element[attribute: "type"] ?? "") {
                return IQ(element)
            }
            early.append(element)
        }
    }
}

/// Reads `<stream:error/>` (RFC 6120 §4.9) into a `ClientError`.
enum StreamErrorReader {
    static func error(from element: Element) -> ClientError {
        let conditionElement = element.childElements.first { $0.namespace == Namespace.streamErrors && $0.name != "text" }
        let condition = conditionElement?.name ?? "undefined-condition"
        let text = element.child("text", namespace: Namespace.streamErrors)?.text
        if condition == "see-other-host", let host = conditionElement?.text, !host.isEmpty { return .seeOtherHost(host) }
        return .streamError(condition: condition, text: (text?.isEmpty ?? true) ? nil : text)
    }

    static func element(condition: String, text: String? = nil) -> Element {
        var e = Element("error", namespace: Namespace.stream)
        e.append(Element(condition, namespace: Namespace.streamErrors))
        if let text { e.append(Element("text", namespace: Namespace.streamErrors, text: text)) }
        return e
    }
}
