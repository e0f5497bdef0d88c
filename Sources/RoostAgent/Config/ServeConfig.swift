/// `[serve]`: the web view (`roost serve`) inside `roost run`. See docs/serve.md.
public struct ServeConfig: Sendable, Hashable {
    /// `enabled`: `roost run` serves the archive too.
    public var enabled = false
    /// `port`: 0 picks a free port.
    public var port: UInt16 = 8765
    /// `listen`: the IP address to bind; anything but loopback also needs `allow_remote = true`.
    public var listen = "127.0.0.1"
    /// `allow_remote`: the explicit consent to serve beyond this machine.
    public var allowRemote = false
    /// `allow_hosts`: host names accepted in the Host header besides IP addresses and localhost
    /// (comma-separated), for a remote bind reached by name.
    public var allowHosts: [String] = []

    public init() {}
}
