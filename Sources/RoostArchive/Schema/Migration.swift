/// One schema step. Versions are applied in order, once, and recorded in `schema_migrations`.
struct Migration: Sendable {
    let version: Int
    let name: String
    let sql: String
}
