/// A parsed JSON value (import reads jsonl exports with it).
enum JSONNode: Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONNode])
    case object([String: JSONNode])
}
