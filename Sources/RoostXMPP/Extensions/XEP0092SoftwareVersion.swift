/// XEP-0092 Software Version: the client's name and version, to whoever asks.
enum SoftwareVersion {
    /// Answers `get` with the configuration's `clientName` and `clientVersion`.
    static let module = ClientModule(name: "XEP-0092 Software Version", features: [Namespace.version], handlers: [
        .request(namespace: Namespace.version) { iq, client in
            guard iq.type == .get, let payload = iq.payload, payload.name == "query" else { return .unsupported }
            var query = Element("query", namespace: Namespace.version)
            query.append(Element("name", namespace: Namespace.version, text: client.configuration.clientName))
            query.append(Element("version", namespace: Namespace.version, text: client.configuration.clientVersion))
            return .answer(iq.result(payload: query))
        },
    ])
}
