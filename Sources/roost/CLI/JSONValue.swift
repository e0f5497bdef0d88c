/// A JSON value built by commands for `--json` output. Objects keep their keys in the order written,
/// so output is deterministic and reads naturally (`id` first).
enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// Compact JSON text on one line (RFC 8259), as JSON Lines requires.
    var serialized: String {
        var text = ""
        JSONText.append(self, to: &text)
        return text
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByFloatLiteral, ExpressibleByNilLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral {
    init(stringLiteral value: String) { self = .string(value) }
    init(integerLiteral value: Int64) { self = .int(value) }
    init(booleanLiteral value: Bool) { self = .bool(value) }
    init(floatLiteral value: Double) { self = .double(value) }
    init(nilLiteral: ()) { self = .null }
    init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    init(dictionaryLiteral elements: (String, JSONValue)...) { self = .object(JSONObject(elements)) }

    /// `.null` for nil, so optional fields stay present with a null value.
    static func string(_ value: String?) -> JSONValue {
        value.map { .string($0) } ?? .null
    }

    static func int(_ value: Int) -> JSONValue {
        .int(Int64(value))
    }
}
