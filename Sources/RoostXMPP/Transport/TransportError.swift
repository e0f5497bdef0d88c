/// Why a TCP connection could not be made or used.
public enum TransportError: Error, CustomStringConvertible, Equatable {
    /// The host name could not be turned into addresses.
    case resolutionFailed(host: String, reason: String)
    /// Every address of the host refused or failed the connection; `reason` is the last failure.
    case connectFailed(host: String, port: UInt16, reason: String)
    /// No address of the host answered within the connect timeout.
    case connectTimedOut(host: String, port: UInt16)
    /// The socket was closed locally (by `close()`), so no more I/O is possible.
    case closed
    /// A write made no progress for this long: the peer stopped reading, or the path to it is dead.
    case writeTimedOut(seconds: Int)
    /// A read or write failed on an established connection (reset by peer, broken pipe, …).
    case ioError(String)
    /// The process or the machine ran short of descriptors or memory for a socket (EMFILE, ENFILE, ENOBUFS,
    /// ENOMEM; see `ResourceShortage`): nothing about the server or the config, tried again later.
    case resourceShortage(String)

    public var description: String {
        switch self {
        case let .resolutionFailed(host, reason):
            return "cannot resolve \(host): \(reason); check the host name and that DNS works on this machine"
        case let .connectFailed(host, port, reason):
            return "cannot connect to \(host) port \(port): \(reason); check that the server runs and the port is right"
        case let .connectTimedOut(host, port):
            return "connecting to \(host) port \(port) timed out; the server or a firewall does not answer"
        case .closed:
            return "the connection was closed"
        case let .writeTimedOut(seconds):
            return "the server took nothing Roost sent for \(seconds)s; the connection is stalled"
        case let .ioError(reason):
            return "connection failed: \(reason)"
        case let .resourceShortage(reason):
            return "cannot open a connection: \(reason) (this machine or process is short of descriptors or memory, "
                + "e.g. too many connections open at once)"
        }
    }
}
