import Foundation

/// XDG base-directory resolution and `~` expansion, driven by an explicit environment so tests can set it.
struct ConfigPaths {
    let environment: [String: String]

    struct ConfigFile {
        let path: String
        /// What named the file (`--config`, `$ROOST_CONFIG`); nil for the default location.
        let explicitOrigin: String?
    }

    var home: String {
        if let home = environment["HOME"], !home.isEmpty { return home }
        return NSHomeDirectory()
    }

    func configFile(explicitPath: String?) -> ConfigFile {
        if let explicitPath, !explicitPath.isEmpty {
            return ConfigFile(path: expandingTilde(explicitPath), explicitOrigin: "--config")
        }
        if let fromEnvironment = environment["ROOST_CONFIG"], !fromEnvironment.isEmpty {
            return ConfigFile(path: expandingTilde(fromEnvironment), explicitOrigin: "$ROOST_CONFIG")
        }
        let base = xdgDirectory("XDG_CONFIG_HOME", fallback: ".config")
        return ConfigFile(path: base + "/roost/config.ini", explicitOrigin: nil)
    }

    var defaultArchivePath: String {
        xdgDirectory("XDG_DATA_HOME", fallback: ".local/share") + "/roost/archive.sqlite"
    }

    /// The XDG spec says relative values are invalid and must be ignored.
    private func xdgDirectory(_ variable: String, fallback: String) -> String {
        if let value = environment[variable], value.hasPrefix("/") {
            return value
        }
        return home + "/" + fallback
    }

    func expandingTilde(_ path: String) -> String {
        if path == "~" { return home }
        if path.hasPrefix("~/") { return home + path.dropFirst(1) }
        return path
    }
}
