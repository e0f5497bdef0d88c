internal import CSystem

/// A descriptor that becomes readable when process `pid` exits (pidfd_open, Linux 5.3+; -1 where the kernel
/// lacks it). Kept in a file of its own: importing CSystem beside Foundation makes the C types it re-exports
/// (pid_t, SIGTERM) ambiguous in public declarations.
func processDescriptor(_ pid: Int32) -> Int32 { roost_pidfd_open(pid) }
