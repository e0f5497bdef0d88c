/// Time-ordered message ids: `timestamp_ms << 20 | n`. See `SchemaV1`.
enum MessageID {
    static let slotBits: Int64 = 20
    static let slotSize: Int64 = 1 << slotBits

    /// The first id of a millisecond (timestamps before 1970 share slot 0).
    static func base(forTimestamp timestamp: Int64) -> Int64 {
        let clamped = min(max(timestamp, 0), (Int64.max >> slotBits) - 1)
        return clamped << slotBits
    }

    /// The id range `[lower, upper)` covering timestamps `[from, to)` in milliseconds.
    static func range(fromTimestamp from: Int64) -> Int64 { base(forTimestamp: from) }
}
