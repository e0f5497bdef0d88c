/// Message rows of one account that share a key they should not share (`roost verify`).
public struct DuplicateGroup: Sendable, Equatable {
    /// The trusted stanza-id or the fallback dedup key the rows share.
    public var key: String
    /// The rows' archive ids, oldest first.
    public var rowIds: [Int64]

    public init(key: String, rowIds: [Int64]) {
        self.key = key
        self.rowIds = rowIds
    }
}
