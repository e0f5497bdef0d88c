/// The message row a cursor stands on, read only when asked: the jsonl writer encodes its columns straight
/// from SQLite's buffers (no Swift strings on the hot path), the other writers load a `MessageRow`.
/// Valid only while its cursor has not advanced, which the event stream guarantees: it hands an event to the
/// writer before stepping that cursor again.
struct MessageRowView {
    let row: Statement.Row
    let reading: MessageRowReading
    let includeRevisionRaw: Bool
    let timestamp: Int64

    func load() throws(SQLiteError) -> MessageRow {
        try reading.row(row, includeRevisionRaw: includeRevisionRaw)
    }
}
