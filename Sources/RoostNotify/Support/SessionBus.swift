import Foundation

/// Whether a D-Bus session bus can be reached without GLib trying to autolaunch one (which can hang on a
/// headless machine).
enum SessionBus {
    static func isConfigured(environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        if let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty { return true }
        guard let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty else { return false }
        return FileManager.default.fileExists(atPath: runtime + "/bus")
    }
}
