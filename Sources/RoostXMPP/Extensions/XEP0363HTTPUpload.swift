import Foundation

/// XEP-0363 HTTP File Upload: ask the server's upload service for a slot (a PUT URL and a GET URL), PUT the
/// file there, then share the GET URL.
public enum HTTPUpload {
    /// An upload service found through service discovery.
    public struct Service: Sendable, Equatable {
        public var jid: JID
        /// The largest file it accepts, when it says.
        public var maxFileSize: Int64?

        public init(jid: JID, maxFileSize: Int64?) {
            self.jid = jid
            self.maxFileSize = maxFileSize
        }
    }

    /// Where to PUT the file and the URL others download it from.
    public struct Slot: Sendable, Equatable {
        public var putURL: String
        public var getURL: String
        /// Headers to send with the PUT: only `Authorization`, `Cookie` and `Expires` are honoured (§4), with
        /// line breaks removed, so a server cannot smuggle others in.
        public var headers: [Header]

        public struct Header: Sendable, Equatable {
            public var name: String
            public var value: String
        }
    }

    static let allowedHeaders = ["authorization", "cookie", "expires"]

    /// The service described by `info` (disco#info of `jid`), or nil when it offers no HTTP upload.
    public static func service(_ jid: JID, info: DiscoInfo) -> Service? {
        guard info.supports(Namespace.httpUpload) else { return nil }
        var maxSize: Int64?
        for form in info.forms {
            let fields = form.children("field", namespace: Namespace.dataForms)
            guard fields.contains(where: { $0[attribute: "var"] == "FORM_TYPE" && $0.child("value", namespace: Namespace.dataForms)?.text == Namespace.httpUpload }) else { continue }
            if let value = fields.first(where: { $0[attribute: "var"] == "max-file-size" })?.child("value", namespace: Namespace.dataForms)?.text,
               let size = Int64(value.trimmingCharacters(in: .whitespaces)), size > 0 {
                maxSize = size
            }
        }
        return Service(jid: jid, maxFileSize: maxSize)
    }

    public static func slotRequest(to service: JID, fileName: String, size: Int64, contentType: String?) -> IQ {
        var request = Element("request", namespace: Namespace.httpUpload, attributes: [("filename", fileName), ("size", String(size))])
        if let contentType { request[attribute: "content-type"] = contentType }
        return IQ(type: .get, to: service, payload: request)
    }

    public static func slot(in iq: IQ) -> Slot? {
        guard let slot = iq.element.child("slot", namespace: Namespace.httpUpload),
              let put = slot.child("put", namespace: Namespace.httpUpload), let putURL = put[attribute: "url"],
              let getURL = slot.child("get", namespace: Namespace.httpUpload)?[attribute: "url"],
              !putURL.isEmpty, !getURL.isEmpty else { return nil }
        let headers = put.children("header", namespace: Namespace.httpUpload).compactMap { header -> Slot.Header? in
            guard let name = header[attribute: "name"], allowedHeaders.contains(name.lowercased()) else { return nil }
            let value = header.text.filter { $0 != "\r" && $0 != "\n" }
            return Slot.Header(name: name, value: value)
        }
        return Slot(putURL: putURL, getURL: getURL, headers: headers)
    }

    /// The limit a `<file-too-large/>` refusal names, if the error is one.
    public static func refusedSize(_ error: StanzaError) -> (tooLarge: Bool, maxFileSize: Int64?) {
        guard let condition = error.applicationCondition, condition.name == "file-too-large",
              condition.namespace == Namespace.httpUpload else { return (false, nil) }
        let limit = condition.child("max-file-size", namespace: Namespace.httpUpload).flatMap { Int64($0.text.trimmingCharacters(in: .whitespaces)) }
        return (true, limit)
    }
}
