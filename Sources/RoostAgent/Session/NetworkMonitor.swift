import Foundation
import RoostCore
internal import CResolv

/// Watches route netlink for link, address and route changes, so accounts waiting to reconnect try again
/// at once when the network comes back instead of sleeping out their backoff.
final class NetworkMonitor: @unchecked Sendable {
    private let fd: Int32
    private let onChange: @Sendable () -> Void

    /// nil where netlink is unavailable (then reconnects rely on backoff alone).
    init?(onChange: @escaping @Sendable () -> Void) {
        let fd = socket(AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), NETLINK_ROUTE)
        guard fd >= 0 else { return nil }
        var address = sockaddr_nl()
        address.nl_family = sa_family_t(AF_NETLINK)
        address.nl_groups = roost_rtnetlink_groups()
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_nl>.size)) }
        }
        guard bound == 0 else {
            close(fd)
            return nil
        }
        self.fd = fd
        self.onChange = onChange
        startThread(named: "roost.netlink") { [self] in self.run() }
    }

    private func run() {
        var buffer = [UInt8](repeating: 0, count: 8192)
        var lastNotice = ContinuousClock.now - .seconds(10)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 {
                if errno == EINTR || errno == ENOBUFS { continue }
                return
            }
            if n == 0 { return }
            // Changes come in bursts; one nudge per second is enough.
            if ContinuousClock.now - lastNotice >= .seconds(1) {
                lastNotice = .now
                onChange()
            }
        }
    }
}
