import Foundation

/// The control socket's JSON-lines protocol (docs/control.md): one request object per line, one response
/// object per line, in order, on a connection that stays open until the client closes it.
///
///     {"id": 1, "command": "roster.add", "account": "me@example.org", "arguments": {"jid": "friend@example.org", "groups": []}}
///     {"id": 1, "ok": true, "result": {"jid": "friend@example.org", "groups": [], "subscription": "none", "pending": true}}
///     {"id": 2, "ok": false, "error": {"kind": "not-found", "message": "..."}}
public enum ControlProtocol {
    public static let version = 1
    /// A request line longer than this is answered with `too-large` and the connection is closed
    /// (an avatar of `VCardPublishAction.maxPhotoBytes` in base64 fits).
    public static let maxRequestBytes = 1 << 20
    /// Connections served at once; beyond them, `reservedConnections` more answer `status` and `ping` only
    /// (one request each), so a crowd of idle or busy clients never locks `roost status` out; more than that
    /// are answered with an error and closed.
    public static let maxConnections = 16
    public static let reservedConnections = 4
    /// An idle connection is closed after this long without a request (the CLI sends its request as soon as it
    /// connects; a client that keeps a connection open between requests reconnects after a pause).
    public static let idleTimeoutSeconds = 10
    /// How long a connection in a reserved slot may take to send its one request.
    public static let reservedRequestTimeoutSeconds = 2
}

/// The `id` a client chose, echoed back: a string or an integer.
public enum ControlRequestID: Codable, Sendable, Equatable {
    case string(String)
    case number(Int64)

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Int64.self) {
            self = .number(number)
        } else {
            self = .string(try container.decode(String.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let s): try container.encode(s)
        case .number(let n): try container.encode(n)
        }
    }
}

struct ControlRequestHeader: Decodable {
    var id: ControlRequestID?
    var command: String
    var account: String?
    /// The client wants progress lines before the answer (long transfers: `message.send-file`).
    var progress: Bool?
}

struct ControlRequest<Arguments: Codable>: Codable {
    var id: ControlRequestID?
    var command: String
    var account: String?
    var arguments: Arguments?
    var progress: Bool?
}

/// An interim line before the answer of a request that asked for `"progress": true`.
struct ControlProgress: Codable {
    var id: ControlRequestID?
    var progress: TransferProgress
}

struct ControlSuccess<Result: Codable>: Codable {
    var id: ControlRequestID?
    var ok: Bool
    var result: Result
}

struct ControlFailureResponse: Codable {
    var id: ControlRequestID?
    var ok: Bool
    var error: ActionFailure
}

struct ControlResponseHeader: Decodable {
    var ok: Bool
    var error: ActionFailure?
}

/// The arguments of commands that take none.
struct NoArguments: Codable, Sendable {}

enum ControlJSON {
    static func encode(_ value: some Encodable) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        return (try? encoder.encode(value)) ?? Data(#"{"ok":false,"error":{"kind":"internal","message":"could not encode the response"}}"#.utf8)
    }

    static func failure(_ failure: ActionFailure, id: ControlRequestID?) -> Data {
        encode(ControlFailureResponse(id: id, ok: false, error: failure))
    }
}
