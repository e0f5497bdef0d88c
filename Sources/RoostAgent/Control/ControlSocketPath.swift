import Foundation

/// Where the agent listens: `$XDG_RUNTIME_DIR/roost/control.sock`, else `/tmp/roost-<uid>/control.sock`.
public enum ControlSocketPath {
    public static func resolve(environment: [String: String]) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            return runtime + "/roost/control.sock"
        }
        return "/tmp/roost-\(getuid())/control.sock"
    }
}
