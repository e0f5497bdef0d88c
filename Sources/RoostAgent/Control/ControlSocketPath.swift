import Foundation
import RoostCore

/// Where the agent listens: `$XDG_RUNTIME_DIR/roost/control.sock`, else `/tmp/roost-<uid>/control.sock` (the
/// runtime folder, `RuntimeFolder`, checked before any use).
public enum ControlSocketPath {
    public static func resolve(environment: [String: String]) -> String {
        RuntimeFolder.path(environment: environment) + "/control.sock"
    }
}
