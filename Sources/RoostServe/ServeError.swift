package import RoostArchive
package import RoostCore

/// Why the web view could not start or act, in words that say what to do.
package enum ServeError: Error, CustomStringConvertible {
    case badAddress(String)
    case listen(host: String, port: UInt16, reason: String)
    case remoteNotAllowed(String)
    case archive(ArchiveError)
    /// The runtime folder, or a file in it, could not be used (`RuntimeFolder`).
    case runtimeFile(RuntimeFolderError)
    /// libsoup (opened when `roost serve` starts) is missing.
    case library(LibraryLoadError)

    package var description: String {
        switch self {
        case .badAddress(let address):
            "cannot listen on '\(address)': give an IP address such as 127.0.0.1 or ::1"
        case let .listen(host, port, reason):
            port == 0 ? "cannot listen on \(host): \(reason)"
                : "cannot listen on \(host):\(port): \(reason) (choose another port with --port N, or 0 for any free one)"
        case .remoteNotAllowed(let address):
            "\(address) is not a loopback address: serving the archive beyond this machine needs --allow-remote"
        case .archive(let error):
            error.description
        case .runtimeFile(let error):
            error.description
        case .library(let error):
            "\(error); install libsoup-3.0-0"
        }
    }
}
