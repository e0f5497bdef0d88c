import Foundation

/// Why the control socket could not be opened; `roost run` refuses to start then.
public enum ControlServerError: Error, Sendable, CustomStringConvertible {
    case alreadyRunning(path: String)
    case unsafeDirectory(path: String, reason: String)
    case notASocket(path: String)
    case pathTooLong(path: String)
    case system(call: String, path: String, errno: Int32)

    public var description: String {
        switch self {
        case .alreadyRunning(let path):
            return "another roost agent is already running (it answers on \(path)); stop it first (`systemctl --user stop roost`)"
        case .unsafeDirectory(let path, let reason):
            return "refusing to use \(path) for the control socket: \(reason)"
        case .notASocket(let path):
            return "\(path) exists and is not a socket; remove it if nothing needs it"
        case .pathTooLong(let path):
            return "the control socket path \(path) is too long for a Unix socket (108 bytes); set XDG_RUNTIME_DIR to a shorter folder"
        case .system(let call, let path, let code):
            return "\(call) \(path): \(String(cString: strerror(code)))"
        }
    }
}
