/// A file shared with a message (XEP-0066 OOB URL, an HTTP upload link, XEP-0447 stateless file sharing, …):
/// what the sender advertised and what Roost did about it. Schema in `SchemaV5`.
public struct AttachmentRecord: Sendable, Equatable {
    public var url: String
    /// The file on disk when Roost has it. Read from the archive it is the file store's copy (derived from
    /// `sha256`), or for rows imported from an old export a path outside the store. Written to the archive it
    /// is kept only when `sha256` is nil.
    public var localPath: String?
    /// Media type, as advertised (XEP-0446) or as the server sent it.
    public var mime: String?
    /// Bytes: as advertised until the file is stored, then the stored size.
    public var size: Int64?
    /// The file name the sender gave (XEP-0446), else the last segment of the URL's path.
    public var name: String?
    public var description: String?
    public var width: Int?
    public var height: Int?
    /// XEP-0300 hashes the sender advertised; a stored file matches every one Roost can compute.
    public var hashes: [FileHash]
    /// Lowercase hex SHA-256 of the stored bytes (the plaintext of an `aesgcm://` file).
    public var sha256: String?
    public var state: AttachmentState

    public init(url: String, localPath: String? = nil, mime: String? = nil, size: Int64? = nil, name: String? = nil,
                description: String? = nil, width: Int? = nil, height: Int? = nil, hashes: [FileHash] = [],
                sha256: String? = nil, state: AttachmentState? = nil) {
        self.url = url
        self.localPath = localPath
        self.mime = mime
        self.size = size
        self.name = name
        self.description = description
        self.width = width
        self.height = height
        self.hashes = hashes
        self.sha256 = sha256
        self.state = state ?? (sha256 != nil || localPath != nil ? .stored : .pending)
    }

    /// The name to show and to save under: the advertised one, else the URL's last path segment (decoded).
    public var displayName: String {
        if let name, !name.isEmpty { return name }
        return AttachmentRecord.fileName(fromURL: url) ?? "file"
    }

    public var isImage: Bool { mime?.lowercased().hasPrefix("image/") == true }

    /// The last non-empty path segment of a URL, percent-decoded; nil when there is none.
    public static func fileName(fromURL url: String) -> String? {
        var rest = Substring(url)
        if let scheme = rest.range(of: "://") { rest = rest[scheme.upperBound...] }
        if let end = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) { rest = rest[..<end] }
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        let path = rest[slash...]
        guard let last = path.split(separator: "/").last, !last.isEmpty else { return nil }
        let decoded = String(last).removingPercentEncoding ?? String(last)
        return decoded.isEmpty || decoded.contains("/") ? String(last) : decoded
    }
}

/// One XEP-0300 hash as advertised: the algorithm's name (`sha-256`, `sha3-256`, …) and the base64 digest.
public struct FileHash: Sendable, Hashable {
    public var algorithm: String
    public var base64: String

    public init(algorithm: String, base64: String) {
        self.algorithm = algorithm
        self.base64 = base64
    }

    /// The `hashes` column: `algo=base64` separated by spaces.
    static func column(_ hashes: [FileHash]) -> String? {
        hashes.isEmpty ? nil : hashes.map { "\($0.algorithm)=\($0.base64)" }.joined(separator: " ")
    }

    static func parse(column: String?) -> [FileHash] {
        guard let column else { return [] }
        return column.split(separator: " ").compactMap { item in
            let parts = item.split(separator: "=", maxSplits: 1)
            guard parts.count == 2 else { return nil }
            return FileHash(algorithm: String(parts[0]), base64: String(parts[1]))
        }
    }
}

/// What Roost did about an attachment's file (the `attachments.state` column).
public enum AttachmentState: Sendable, Hashable, CustomStringConvertible {
    /// Waiting for the download worker (possibly a retry, see `attempts`).
    case pending
    /// In the file store.
    case stored
    /// Larger than `[files] max_size`; nothing was written.
    case tooLarge
    /// The download failed; the reason is a short token such as `http-404`, `timeout`, `connect`, `tls`.
    case failed(String)
    /// Roost chose not to keep it: `not-a-contact`, `downloads-off`, `private-address`, `scheme`,
    /// `hash-mismatch`, `redirects`.
    case refused(String)

    public init?(rawValue: String) {
        switch rawValue {
        case "pending": self = .pending
        case "stored": self = .stored
        case "too-large": self = .tooLarge
        default:
            if rawValue.hasPrefix("failed:") { self = .failed(String(rawValue.dropFirst(7))) }
            else if rawValue.hasPrefix("refused:") { self = .refused(String(rawValue.dropFirst(8))) }
            else { return nil }
        }
    }

    public var rawValue: String {
        switch self {
        case .pending: "pending"
        case .stored: "stored"
        case .tooLarge: "too-large"
        case .failed(let reason): "failed:" + reason
        case .refused(let reason): "refused:" + reason
        }
    }

    public var description: String { rawValue }
}
