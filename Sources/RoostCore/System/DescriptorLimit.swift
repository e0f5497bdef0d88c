#if canImport(Glibc)
import Glibc
#endif

/// The process's limit on open descriptors. Many systems start programs with a soft limit of 1024 (and a much
/// higher hard one, 524288 under systemd); the agent holds a socket per account, the archive's files, the control
/// socket's clients and the web view's connections, so `roost run` and `roost serve` raise the soft limit to the hard
/// one (at most `ceiling`) at start. Roost waits with poll(2) everywhere, never select(2), so descriptors above 1024
/// are fine. The contrib/systemd unit also raises it (LimitNOFILE).
public enum DescriptorLimit {
    public static let ceiling = 65_536

    /// Fewer descriptors than this and no command starts (it says so, exit 70). Below it the Swift runtime itself
    /// cannot run: libdispatch makes its event loop's descriptors (epoll, eventfds, timerfds) when it first needs
    /// them, at moments no code of ours chooses, and traps when it cannot — a crash where a process short of
    /// descriptors should be told so. 16 leaves what the runtime needs and a few files for the simplest command.
    public static let fewest = 16

    /// The soft limit in force now (-1 when it cannot be read).
    public static func current() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return -1 }
        return Int(clamping: limit.rlim_cur)
    }

    /// Raises the soft limit as far as allowed; returns the limit now in force.
    @discardableResult
    public static func raise() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return -1 }
        let wanted = min(limit.rlim_max, rlim_t(ceiling))
        if limit.rlim_cur < wanted {
            var raised = limit
            raised.rlim_cur = wanted
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return Int(clamping: limit.rlim_cur)
    }
}
