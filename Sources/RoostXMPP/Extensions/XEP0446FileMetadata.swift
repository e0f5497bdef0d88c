import Foundation

/// XEP-0446 File metadata element: what a shared file is (name, media type, size, hashes, dimensions, …).
public struct FileMetadata: Sendable, Equatable {
    public var name: String?
    public var mediaType: String?
    public var size: Int64?
    public var hashes: [CryptographicHash]
    public var width: Int?
    public var height: Int?
    public var description: String?
    /// XEP-0082 date-time of the file's last modification, as sent.
    public var date: String?

    public init(name: String? = nil, mediaType: String? = nil, size: Int64? = nil, hashes: [CryptographicHash] = [],
                width: Int? = nil, height: Int? = nil, description: String? = nil, date: String? = nil) {
        self.name = name
        self.mediaType = mediaType
        self.size = size
        self.hashes = hashes
        self.width = width
        self.height = height
        self.description = description
        self.date = date
    }

    /// Reads `<file xmlns='urn:xmpp:file:metadata:0'>`; nil for any other element. Values that do not parse
    /// (a negative size, a name with a path) are left out rather than trusted.
    public init?(_ element: Element) {
        guard element.name == "file", element.namespace == Namespace.fileMetadata else { return nil }
        func text(_ name: String) -> String? {
            let value = element.child(name, namespace: Namespace.fileMetadata)?.text.trimmingCharacters(in: .whitespacesAndNewlines)
            return value?.isEmpty == false ? value : nil
        }
        func number(_ name: String) -> Int64? { text(name).flatMap { Int64($0) }.flatMap { $0 >= 0 ? $0 : nil } }
        // A name is a name, not a path: keep what follows the last separator.
        name = text("name").flatMap { $0.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) }
        mediaType = text("media-type")
        size = number("size")
        hashes = CryptographicHash.all(in: element)
        width = number("width").flatMap { Int(exactly: $0) }
        height = number("height").flatMap { Int(exactly: $0) }
        description = text("desc")
        date = text("date")
    }

    public var element: Element {
        var file = Element("file", namespace: Namespace.fileMetadata)
        func add(_ name: String, _ value: String?) {
            if let value { file.append(Element(name, namespace: Namespace.fileMetadata, text: value)) }
        }
        add("media-type", mediaType)
        add("name", name)
        add("size", size.map(String.init))
        add("width", width.map(String.init))
        add("height", height.map(String.init))
        add("desc", description)
        add("date", date)
        for hash in hashes { file.append(hash.element) }
        return file
    }
}
