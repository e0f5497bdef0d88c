#ifndef ROOST_CSYSTEM_SHIM_H
#define ROOST_CSYSTEM_SHIM_H
// Linux calls that Swift cannot reach directly (variadic `syscall`, macros).
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <signal.h>
#include <spawn.h>
#include <fcntl.h>
#include <sys/sysmacros.h>
#include <malloc.h>

// A descriptor that becomes readable when the process exits (Linux 5.3+), so a deadline can be awaited
// with poll(2) next to the process's pipes; -1 where the kernel lacks it.
static inline int roost_pidfd_open(pid_t pid) {
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    return -1;
#endif
}

// pipe2(O_CLOEXEC): both ends close-on-exec from the start, so no child spawned meanwhile by another
// thread inherits them (which would keep the pipe open and hide the end of the output).
static inline int roost_pipe_cloexec(int fds[2]) {
    return (int)syscall(SYS_pipe2, fds, O_CLOEXEC);
}

static inline unsigned roost_major(dev_t device) { return major(device); }
static inline unsigned roost_minor(dev_t device) { return minor(device); }

static inline int roost_wifexited(int status) { return WIFEXITED(status); }
static inline int roost_wexitstatus(int status) { return WEXITSTATUS(status); }
static inline int roost_wifsignaled(int status) { return WIFSIGNALED(status); }
static inline int roost_wtermsig(int status) { return WTERMSIG(status); }

#endif
