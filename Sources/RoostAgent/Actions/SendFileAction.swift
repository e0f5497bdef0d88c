import Foundation
import RoostArchive
import RoostXMPP

/// `message.send-file`: uploads a file with XEP-0363 HTTP File Upload and sends its link to a contact, the
/// way Conversations, Dino and Gajim do: the URL as the body, with XEP-0066 out-of-band data and XEP-0447
/// stateless file sharing (name, type, size, SHA-256) beside it. The file is copied into the file store
/// first, so the message is archived as sent with its file already kept. Optional text goes first, as its
/// own message (a body that is only the link is what other clients show as a file).
public struct SendFileAction: AccountAction {
    public static let command = "message.send-file"

    public var to: String
    /// An absolute path, readable by the agent (the CLI resolves relative paths).
    public var path: String
    public var text: String?

    public init(to: String, path: String, text: String? = nil) {
        self.to = to
        self.path = path
        self.text = text
    }

    public struct Sent: Codable, Sendable, Equatable {
        public var to: String
        public var id: String
        public var url: String
        public var name: String
        public var type: String
        public var size: Int64
        public var sha256: String
        public var timestamp: Int64
        /// The server confirmed it received the link (false: still pending, settled later by the agent).
        public var confirmed: Bool?
    }

    public func perform(in context: ActionContext) async throws(ActionFailure) -> Sent {
        let recipient = try JIDArgument.bare(to)
        let (size, name) = try Self.inspect(path)
        let store = FileStore(root: context.dataDirectory + "/files")
        let stored: StoredFile
        do { stored = try store.put(contentsOf: path) } catch {
            throw ActionFailure(.internalError, "could not copy \(path) into the file store: \(error)")
        }
        guard stored.size == size else { throw ActionFailure(.invalidArgument, "\(path) changed while it was read; try again") }
        let mime = MediaType.guess(name: name, path: stored.path) ?? "application/octet-stream"
        let service = try await uploadService(context)
        if let limit = service.maxFileSize, size > limit {
            throw ActionFailure(.refused, "\(name) is \(FileSize.text(size)); the server accepts files up to \(FileSize.text(limit))")
        }
        let slot = try await requestSlot(service, name: name, size: size, mime: mime, context: context)
        let configuration = context.client.configuration
        try FileUploader(trust: HTTPTrust(caFile: configuration.caFile, pinnedSHA256: configuration.pinnedSHA256))
            .put(path: stored.path, size: size, contentType: mime, to: slot.putURL, headers: slot.headers.map { ($0.name, $0.value) },
                 progress: context.progress)

        if let text, !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            _ = try await SendMessageAction(to: recipient.description, body: text).perform(in: context)
        }
        let id = StanzaID.make()
        let hash = CryptographicHash(algorithm: "sha-256", base64: Data(Hex.bytes(stored.sha256) ?? []).base64EncodedString())
        var message = Message(to: recipient, type: .chat, body: slot.getURL, id: id)
        message.add(OutOfBandData.element(url: slot.getURL))
        message.add(FileSharing(file: FileMetadata(name: name, mediaType: mime, size: size, hashes: [hash]), sources: [slot.getURL],
                                disposition: mime.hasPrefix("image/") ? "inline" : "attachment").element)
        message.add(StanzaIDs.originIDElement(id))
        message.add(Element("active", namespace: Namespace.chatStates))
        let now = ActionArchive.now()
        let from = context.client.boundJID ?? context.account
        var archived = message
        archived.element[attribute: "from"] = from.description
        let attachment = AttachmentRecord(url: slot.getURL, mime: mime, size: size, name: name,
                                          hashes: [FileHash(algorithm: hash.algorithm, base64: hash.base64)], sha256: stored.sha256,
                                          state: .stored)
        let record = MessageRecord(account: context.account.description, conversation: recipient.description, direction: .outgoing,
                                   kind: .chat, from: from.description, to: recipient.description,
                                   senderName: context.account.description, body: slot.getURL, timestamp: now, receivedAt: now,
                                   originId: id, messageId: id, source: .live, rawStanza: XMLSerializer.serialize(archived.element),
                                   attachments: [attachment], delivery: .pending)
        let confirmed = try await SendMessageAction.deliver(message, archived: record, in: context)
        return Sent(to: recipient.description, id: id, url: slot.getURL, name: name, type: mime, size: size, sha256: stored.sha256,
                    timestamp: now, confirmed: confirmed)
    }

    /// The file's size and name, or why it cannot be sent.
    static func inspect(_ path: String) throws(ActionFailure) -> (Int64, String) {
        guard path.hasPrefix("/") else { throw ActionFailure(.invalidArgument, "the file path must be absolute: \(path)") }
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw ActionFailure(.invalidArgument, "cannot send \(path): \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else { throw ActionFailure(.invalidArgument, "cannot send \(path): not a regular file") }
        guard access(path, R_OK) == 0 else { throw ActionFailure(.invalidArgument, "cannot send \(path): permission denied") }
        guard info.st_size > 0 else { throw ActionFailure(.invalidArgument, "cannot send \(path): the file is empty") }
        return (Int64(info.st_size), (path as NSString).lastPathComponent)
    }

    /// The account's XEP-0363 service: the server itself or one of its items (usually `upload.DOMAIN`).
    private func uploadService(_ context: ActionContext) async throws(ActionFailure) -> HTTPUpload.Service {
        guard let domain = JID(parsing: context.account.domain) else {
            throw ActionFailure(.internalError, "the account has no domain")
        }
        if let info = Disco.info(in: try await context.request(Disco.infoRequest(to: domain), doing: "asking \(domain) what it offers")),
           let service = HTTPUpload.service(domain, info: info) {
            return service
        }
        let items = Disco.items(in: try await context.request(Disco.itemsRequest(to: domain), doing: "listing the services of \(domain)"))
        for item in items {
            guard let answer = try? await context.client.request(Disco.infoRequest(to: item)), let info = Disco.info(in: answer) else { continue }
            if let service = HTTPUpload.service(item, info: info) { return service }
        }
        throw ActionFailure(.notFound, "\(domain) offers no HTTP file upload (XEP-0363); ask its admin to enable it (Prosody: http_file_share, ejabberd: mod_http_upload)")
    }

    private func requestSlot(_ service: HTTPUpload.Service, name: String, size: Int64, mime: String,
                             context: ActionContext) async throws(ActionFailure) -> HTTPUpload.Slot {
        let answer: IQ
        do {
            answer = try await context.client.request(HTTPUpload.slotRequest(to: service.jid, fileName: name, size: size, contentType: mime))
        } catch {
            if case .stanzaError(let refusal) = error {
                let (tooLarge, limit) = HTTPUpload.refusedSize(refusal)
                if tooLarge {
                    throw ActionFailure(.refused, "\(name) is \(FileSize.text(size)); the server accepts files up to \(limit.map(FileSize.text) ?? "a smaller size")")
                }
                switch refusal.condition {
                case "resource-constraint":
                    throw ActionFailure(.refused, "the upload quota is exhausted\(refusal.text.map { " (\($0))" } ?? ""); try again later")
                case "not-allowed", "forbidden":
                    throw ActionFailure(.refused, "\(service.jid) does not let this account upload\(refusal.text.map { " (\($0))" } ?? "")")
                default:
                    break
                }
            }
            throw ActionFailure.from(error, doing: "asking \(service.jid) for an upload slot")
        }
        guard let slot = HTTPUpload.slot(in: answer) else {
            throw ActionFailure(.refused, "\(service.jid) answered without an upload slot")
        }
        return slot
    }
}
