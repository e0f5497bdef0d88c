/// vCard fields of a contact (XEP-0054), stored next to its roster fields.
public struct VCardRecord: Sendable, Equatable {
    public var account: String
    public var jid: String
    public var nickname: String?
    public var fullName: String?
    public var photoHash: String?
    public var photoPath: String?
    public var raw: String?
    public var fetchedAt: Int64

    public init(account: String, jid: String, nickname: String? = nil, fullName: String? = nil, photoHash: String? = nil,
                photoPath: String? = nil, raw: String? = nil, fetchedAt: Int64) {
        self.account = account
        self.jid = jid
        self.nickname = nickname
        self.fullName = fullName
        self.photoHash = photoHash
        self.photoPath = photoPath
        self.raw = raw
        self.fetchedAt = fetchedAt
    }
}
