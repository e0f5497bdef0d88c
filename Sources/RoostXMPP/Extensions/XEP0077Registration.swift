/// XEP-0077 In-Band Registration: create an account, change its password, or cancel it.
public enum Registration {
    /// The registration form fields the server asks for (`username`, `password`, maybe `email`...).
    public static func fieldsRequest() -> IQ {
        IQ(type: .get, payload: Element("query", namespace: Namespace.register))
    }

    public static func registerRequest(username: String, password: String, extra: [String: String] = [:]) -> IQ {
        var query = Element("query", namespace: Namespace.register)
        query.append(Element("username", namespace: Namespace.register, text: username))
        query.append(Element("password", namespace: Namespace.register, text: password))
        for (key, value) in extra.sorted(by: { $0.key < $1.key }) {
            query.append(Element(key, namespace: Namespace.register, text: value))
        }
        return IQ(type: .set, payload: query)
    }

    /// §3.3: sent on an authenticated stream, to the server.
    public static func changePasswordRequest(account: JID, newPassword: String) -> IQ {
        var query = Element("query", namespace: Namespace.register)
        query.append(Element("username", namespace: Namespace.register, text: account.localpart ?? ""))
        query.append(Element("password", namespace: Namespace.register, text: newPassword))
        return IQ(type: .set, to: JID(parsing: account.domain), payload: query)
    }

    /// §3.2: the account is deleted; the server closes the stream afterwards.
    public static func cancelRequest(account: JID) -> IQ {
        var query = Element("query", namespace: Namespace.register)
        query.append(Element("remove", namespace: Namespace.register))
        return IQ(type: .set, to: JID(parsing: account.domain), payload: query)
    }

    public static func requiredFields(in iq: IQ) -> [String] {
        guard let query = iq.element.child("query", namespace: Namespace.register) else { return [] }
        return query.childElements.filter { $0.namespace == Namespace.register && !["instructions", "registered", "remove"].contains($0.name) }.map(\.name)
    }

    public static func isAlreadyRegistered(_ iq: IQ) -> Bool {
        iq.element.child("query", namespace: Namespace.register)?.child("registered", namespace: Namespace.register) != nil
    }
}
