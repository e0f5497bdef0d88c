/// XEP-0447 Stateless file sharing: a file's metadata (XEP-0446) and where to get it (`<url-data/>` sources,
/// XEP-0103), in one `<file-sharing/>` element of a message.
///
/// Encrypted sources (XEP-0448) and sources sent later in a separate message (`<attach-to/>`) are not read:
/// Roost keeps only what it can fetch and check.
public struct FileSharing: Sendable, Equatable {
    public var file: FileMetadata
    /// The `target` of each `<url-data/>` source, in order.
    public var sources: [String]
    /// `inline` or `attachment`, when given.
    public var disposition: String?

    public init(file: FileMetadata, sources: [String], disposition: String? = nil) {
        self.file = file
        self.sources = sources
        self.disposition = disposition
    }

    public init?(_ element: Element) {
        guard element.name == "file-sharing", element.namespace == Namespace.statelessFileSharing,
              let file = element.child("file", namespace: Namespace.fileMetadata).flatMap(FileMetadata.init) else { return nil }
        self.file = file
        disposition = element[attribute: "disposition"]
        sources = element.child("sources", namespace: Namespace.statelessFileSharing)?
            .children("url-data", namespace: Namespace.urlData).compactMap { $0[attribute: "target"] }.filter { !$0.isEmpty } ?? []
    }

    /// Every file shared in `message`.
    public static func all(in message: Message) -> [FileSharing] {
        message.element.children("file-sharing", namespace: Namespace.statelessFileSharing).compactMap(FileSharing.init)
    }

    public var element: Element {
        var sharing = Element("file-sharing", namespace: Namespace.statelessFileSharing)
        if let disposition { sharing[attribute: "disposition"] = disposition }
        sharing.append(file.element)
        var list = Element("sources", namespace: Namespace.statelessFileSharing)
        for url in sources { list.append(Element("url-data", namespace: Namespace.urlData, attributes: [("target", url)])) }
        sharing.append(list)
        return sharing
    }
}
