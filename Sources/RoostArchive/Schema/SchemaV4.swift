/// Schema version 4: histories imported from other clients.
///
/// `messages_imported` indexes only the rows an import added (`source = 'import'`), by conversation and (the
/// implicit rowid) time, so that a live message can be compared with imported rows of its conversation within
/// the time window of `CrossSourceMatch` in one index seek, and at no cost at all in an archive that never
/// imported anything.
enum SchemaV4 {
    static let sql = """
    CREATE INDEX messages_imported ON messages(conversation) WHERE source = 'import';
    """
}
