/// A file shared with a message (XEP-0066 OOB URL, HTTP upload link, …).
public struct AttachmentRecord: Sendable, Equatable {
    public var url: String
    public var localPath: String?
    public var mime: String?
    public var size: Int64?

    public init(url: String, localPath: String? = nil, mime: String? = nil, size: Int64? = nil) {
        self.url = url
        self.localPath = localPath
        self.mime = mime
        self.size = size
    }
}
