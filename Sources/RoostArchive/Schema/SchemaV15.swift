/// Schema version 15: the name a room gives itself in its disco#info identity (issue 30, 9), kept apart from the
/// bookmark's name (`rooms.name`, which the user chose and which wins). Pages and `roost rooms` show
/// `coalesce(name, disco_name)`, so a room joined by `roost rooms join` or the config, without a named bookmark, is
/// shown by its name rather than its address.
enum SchemaV15 {
    static let sql = """
    ALTER TABLE rooms ADD COLUMN disco_name TEXT;
    """
}
