import Glibc

/// The one place that decides whether a system error means "short of something for now" — descriptors
/// (EMFILE, ENFILE), memory (ENOMEM, ENOBUFS), processes (EAGAIN from fork/spawn), disk space (ENOSPC,
/// EDQUOT). Such an error says nothing about the configuration: whatever failed is tried again later, never
/// reported as something the user must change (an agent that stops on it stops archiving for good).
public enum ResourceShortage {
    public static func isShortage(errno code: Int32) -> Bool {
        switch code {
        case EMFILE, ENFILE, ENOMEM, ENOBUFS, EAGAIN, ENOSPC, EDQUOT: true
        default: false
        }
    }

    /// The errno that stops this process from opening `count` more descriptors right now (EMFILE, ENFILE, ENOMEM),
    /// or nil when it can (they are opened and closed again). For verdicts reached by reading files behind the
    /// caller's back (OpenSSL looking up an issuer in the system's CA folder fails silently when no descriptor is
    /// left, which reads as "not trusted"), and before calling a library that aborts the process when it runs out.
    public static func descriptorShortageNow(count: Int = 1) -> Int32? {
        var opened: [Int32] = []
        defer { for fd in opened { close(fd) } }
        for _ in 0..<count {
            let fd = open("/dev/null", O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                let code = errno
                return isShortage(errno: code) ? code : nil
            }
            opened.append(fd)
        }
        return nil
    }

    /// "Too many open files", for log lines.
    public static func text(_ code: Int32) -> String { String(cString: strerror(code)) }
}
