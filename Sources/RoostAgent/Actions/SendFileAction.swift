import RoostCore
import Foundation
import RoostArchive
import RoostXMPP
import RoostOMEMO

/// `message.send-file`: uploads a file with XEP-0363 HTTP File Upload and sends its link to a contact, the
/// way Conversations, Dino and Gajim do: the URL as the body, with XEP-0066 out-of-band data and XEP-0447
/// stateless file sharing (name, type, size, SHA-256) beside it. In an OMEMO conversation the file is
/// encrypted first (XEP-0454, AES-256-GCM) and the `aesgcm://` link is the encrypted message's whole body,
/// with nothing in the clear beside it. The file is copied into the file store first, so the message is
/// archived as sent with its file already kept. Optional text goes first, as its own message (a body that is
/// only the link is what other clients show as a file).
///
/// `roost send --file` reads the file itself and copies it into the store (`staging`), handing the agent only its
/// SHA-256 and name: the agent may not see the user's path at all (the systemd unit's `PrivateTmp=yes` gives it a
/// /tmp of its own; `ProtectHome=read-only` still lets it read, but other sandboxes may not).
public struct SendFileAction: AccountAction {
    public static let command = "message.send-file"

    public var to: String
    /// The file as the user named it, absolute (the CLI resolves relative paths): read by the agent only when
    /// `sha256` is absent, else named in messages.
    public var path: String
    /// The file already in the archive's file store, by its SHA-256 (lowercase hex), as `staging` put it there.
    public var sha256: String?
    /// The name the file is sent under (default: the last component of `path`).
    public var name: String?
    public var text: String?
    /// Send unencrypted even into an OMEMO-encrypted conversation.
    public var plaintext: Bool?

    public init(to: String, path: String, text: String? = nil, plaintext: Bool = false) {
        self.to = to
        self.path = path
        self.text = text
        self.plaintext = plaintext ? true : nil
    }

    /// The action for `path` read by the caller, not the agent: checks it (`inspect`), copies it into the file store
    /// of the archive at `archivePath` (the agent's, from the same config) and names it there by its hash.
    public static func staging(to: String, path: String, text: String? = nil, plaintext: Bool = false,
                               archivePath: String) throws(ActionFailure) -> SendFileAction {
        let (size, name) = try inspect(path)
        let stored = try copy(path, into: FileStore(archivePath: archivePath))
        guard stored.size == size else { throw ActionFailure(.invalidArgument, "\(path) changed while it was read; try again") }
        var action = SendFileAction(to: to, path: path, text: text, plaintext: plaintext)
        action.sha256 = stored.sha256
        action.name = name
        return action
    }

    /// Blocking work (copying, hashing, a transfer) on a thread of its own (`offPool`), keeping its `ActionFailure`.
    private static func offPool<T: Sendable>(_ name: String, _ body: @escaping @Sendable () throws(ActionFailure) -> T) async throws(ActionFailure) -> T {
        do {
            return try await RoostCore.offPool(name: name) { try body() }
        } catch let failure as ActionFailure {
            throw failure
        } catch {
            throw ActionFailure(.internalError, "\(name): \(error)")
        }
    }

    private static func copy(_ path: String, into store: FileStore) throws(ActionFailure) -> StoredFile {
        do { return try store.put(contentsOf: path) } catch {
            throw ActionFailure(.internalError, "could not copy \(path) into the file store: \(error)")
        }
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
        /// `omemo` when the link went out encrypted (and the file as `aesgcm://`).
        public var encryption: String?
    }

    public func perform(in context: ActionContext) async throws(ActionFailure) -> Sent {
        let recipient = try JIDArgument.bare(to)
        let store = FileStore(root: context.dataDirectory + "/files")
        let stored: StoredFile
        let size: Int64, name: String
        if let sha256 {
            guard let file = store.stored(sha256: sha256) else {
                throw ActionFailure(.invalidArgument, "the file store of \(context.dataDirectory) holds no file \(sha256) (is roost send using the agent's config?)")
            }
            (stored, size, name) = (file, file.size, self.name ?? (path as NSString).lastPathComponent)
        } else {
            (size, name) = try Self.inspect(path)
            let path = self.path
            stored = try await Self.offPool("roost.upload.copy") { () throws(ActionFailure) in try Self.copy(path, into: store) }
            guard stored.size == size else { throw ActionFailure(.invalidArgument, "\(path) changed while it was read; try again") }
        }
        let mime = MediaType.guess(name: name, path: stored.path) ?? "application/octet-stream"
        // An OMEMO conversation gets the file encrypted too (XEP-0454): the server sees only ciphertext, and
        // the link travels inside the encrypted message.
        let encryption = try SendMessageAction.encryptionNeeded(for: recipient, plaintext: plaintext == true, in: context)
        var upload = (path: stored.path, size: size, type: mime)
        var fragment: String?
        if encryption != nil {
            let sealed = store.root + "/tmp/send-" + StanzaID.make()
            fragment = try AESGCMFile.seal(stored.path, into: sealed)
            upload = (sealed, size + Int64(AESGCMFile.tagLength), "application/octet-stream")
        }
        defer { if fragment != nil { unlink(upload.path) } }
        let service = try await uploadService(context)
        if let limit = service.maxFileSize, upload.size > limit {
            throw ActionFailure(.refused, "\(name) is \(FileSize.text(size)); the server accepts files up to \(FileSize.text(limit))")
        }
        let slot = try await requestSlot(service, name: name, size: upload.size, mime: upload.type, context: context)
        var url = slot.getURL
        if let fragment {
            guard url.lowercased().hasPrefix("https://") else {
                throw ActionFailure(.refused, "the upload service hands out \(url.prefix(while: { $0 != ":" })) links; encrypted files (aesgcm) need https (send with --plaintext to share it unencrypted)")
            }
            url = "aesgcm://" + url.dropFirst(8) + "#" + fragment
        }
        let configuration = context.client.configuration
        let uploader = FileUploader(trust: HTTPTrust(caFile: configuration.caFile, pinnedSHA256: configuration.pinnedSHA256))
        let (putURL, headers, progress, source) = (slot.putURL, slot.headers.map { ($0.name, $0.value) }, context.progress, upload)
        // libcurl's transfer blocks its thread for as long as the upload takes: a thread of its own, not the pool's.
        try await Self.offPool("roost.upload") { () throws(ActionFailure) in
            try uploader.put(path: source.path, size: source.size, contentType: source.type, to: putURL, headers: headers, progress: progress)
        }

        if let text, !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            _ = try await SendMessageAction(to: recipient.description, body: text, plaintext: plaintext == true).perform(in: context)
        }
        let id = StanzaID.make()
        let hash = CryptographicHash(algorithm: "sha-256", base64: Data(Hex.bytes(stored.sha256) ?? []).base64EncodedString())
        var message = Message(to: recipient, type: .chat, body: url, id: id)
        var encrypted: OMEMOService.Outgoing?
        if let preferred = encryption {
            encrypted = try await context.omemo!.encrypt(url, to: recipient, id: id, preferred: preferred, client: context.client)
            message = encrypted!.message
        } else {
            message.add(OutOfBandData.element(url: url))
            message.add(FileSharing(file: FileMetadata(name: name, mediaType: mime, size: size, hashes: [hash]), sources: [url],
                                    disposition: mime.hasPrefix("image/") ? "inline" : "attachment").element)
            message.add(StanzaIDs.originIDElement(id))
        }
        message.add(Element("active", namespace: Namespace.chatStates))
        let now = Timestamp.now()
        let from = context.client.boundJID ?? context.account
        var archived = message
        archived.element[attribute: "from"] = from.description
        let attachment = AttachmentRecord(url: url, mime: mime, size: size, name: name,
                                          hashes: [FileHash(algorithm: hash.algorithm, base64: hash.base64)], sha256: stored.sha256,
                                          state: .stored)
        var record = MessageRecord(account: context.account.description, conversation: recipient.description, direction: .outgoing,
                                   kind: .chat, from: from.description, to: recipient.description,
                                   senderName: context.account.description, body: url, timestamp: now, receivedAt: now,
                                   originId: id, messageId: id, source: .live, rawStanza: XMLSerializer.serialize(archived.element),
                                   attachments: [attachment], delivery: .pending)
        record.encryption = encrypted?.encryption
        let confirmed = try await SendMessageAction.deliver(message, archived: record, in: context)
        return Sent(to: recipient.description, id: id, url: url, name: name, type: mime, size: size, sha256: stored.sha256,
                    timestamp: now, confirmed: confirmed, encryption: encrypted?.encryption.scheme)
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
