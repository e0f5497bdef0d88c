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
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/inet_diag.h>

// posix_spawn_file_actions_addclosefrom_np (glibc 2.34+): spawn.h declares it only under _DEFAULT_SOURCE, which
// a module map cannot set; the child closes every descriptor from `from` up.
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);
static inline int roost_spawn_close_from(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

// posix_spawn_file_actions_addchdir_np (glibc 2.29+), declared under _DEFAULT_SOURCE too: the child starts in `path`.
extern int posix_spawn_file_actions_addchdir_np(posix_spawn_file_actions_t *actions, const char *path);
static inline int roost_spawn_chdir(posix_spawn_file_actions_t *actions, const char *path) {
    return posix_spawn_file_actions_addchdir_np(actions, path);
}

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

// syncfs(2) (a GNU extension the headers hide without _GNU_SOURCE): writes back the one filesystem holding `fd`,
// where sync(2) writes back every one.
static inline int roost_syncfs(int fd) {
    return (int)syscall(SYS_syncfs, fd);
}

// An unnamed file in the folder open as `folder` (openat(2) with O_TMPFILE, hidden without _GNU_SOURCE), for
// writing; `roost_link_descriptor` (or linkat(2) of /proc/self/fd/N) gives it a name once whole. -1 with EOPNOTSUPP
// (or EISDIR) where the filesystem has none.
static inline int roost_open_tmpfile(int folder) {
    return openat(folder, ".", __O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
}

// linkat(2) of the file open as `fd` itself (AT_EMPTY_PATH, hidden without _GNU_SOURCE) to `name` in the folder
// open as `folder`: Linux 6.10+ lets the process that opened the file do it; older ones answer ENOENT without
// CAP_DAC_READ_SEARCH.
static inline int roost_link_descriptor(int fd, int folder, const char *name) {
    return linkat(fd, "", folder, name, 0x1000 /* AT_EMPTY_PATH */);
}

// Names the calling thread for the kernel (prctl(2) PR_SET_NAME; variadic, and pthread_setname_np is hidden
// without _GNU_SOURCE): at most 15 bytes are kept.
#include <sys/prctl.h>
static inline int roost_name_thread(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}

// The calling thread's id in the kernel (gettid(2); glibc hides its wrapper without _GNU_SOURCE): its
// `/proc/self/task/ID`.
static inline int roost_thread_id(void) {
    return (int)syscall(SYS_gettid);
}

static inline unsigned roost_major(dev_t device) { return major(device); }
static inline unsigned roost_minor(dev_t device) { return minor(device); }

static inline int roost_wifexited(int status) { return WIFEXITED(status); }
static inline int roost_wexitstatus(int status) { return WEXITSTATUS(status); }
static inline int roost_wifsignaled(int status) { return WIFSIGNALED(status); }
static inline int roost_wtermsig(int status) { return WTERMSIG(status); }

// accept4(SOCK_CLOEXEC | SOCK_NONBLOCK) (a GNU extension the headers hide without _GNU_SOURCE): no child spawned
// meanwhile inherits the connection, and it never blocks the thread that serves it.
static inline int roost_accept_cloexec_nonblock(int fd, struct sockaddr *address, socklen_t *length) {
    return (int)syscall(SYS_accept4, fd, address, length, SOCK_CLOEXEC | SOCK_NONBLOCK);
}

// The user owning the other end of a TCP connection made on this machine (the client socket, whose source is
// `peer` and destination `local`), asked of the kernel through sock_diag (NETLINK_SOCK_DIAG), as `ss -e` does:
// how the web view tells local users apart, who all connect from 127.0.0.1. -1 when the kernel does not say (no
// such socket in this network namespace: the peer is another machine or container).
static inline long long roost_tcp_peer_uid(const struct sockaddr *peer, const struct sockaddr *local) {
    if (peer->sa_family != local->sa_family || (peer->sa_family != AF_INET && peer->sa_family != AF_INET6)) return -1;
    struct {
        struct nlmsghdr header;
        struct inet_diag_req_v2 request;
    } message;
    memset(&message, 0, sizeof message);
    message.header.nlmsg_len = sizeof message;
    message.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    message.header.nlmsg_flags = NLM_F_REQUEST;
    message.request.sdiag_family = (unsigned char)peer->sa_family;
    message.request.sdiag_protocol = IPPROTO_TCP;
    message.request.idiag_states = ~0U;
    message.request.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
    message.request.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
    if (peer->sa_family == AF_INET) {
        const struct sockaddr_in *from = (const struct sockaddr_in *)peer, *to = (const struct sockaddr_in *)local;
        message.request.id.idiag_sport = from->sin_port;
        message.request.id.idiag_dport = to->sin_port;
        memcpy(message.request.id.idiag_src, &from->sin_addr, 4);
        memcpy(message.request.id.idiag_dst, &to->sin_addr, 4);
    } else {
        const struct sockaddr_in6 *from = (const struct sockaddr_in6 *)peer, *to = (const struct sockaddr_in6 *)local;
        message.request.id.idiag_sport = from->sin6_port;
        message.request.id.idiag_dport = to->sin6_port;
        memcpy(message.request.id.idiag_src, &from->sin6_addr, 16);
        memcpy(message.request.id.idiag_dst, &to->sin6_addr, 16);
    }
    int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (fd < 0) return -1;
    struct timeval wait = { .tv_sec = 0, .tv_usec = 200000 };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
    struct sockaddr_nl kernel;
    memset(&kernel, 0, sizeof kernel);
    kernel.nl_family = AF_NETLINK;
    long long uid = -1;
    if (sendto(fd, &message, sizeof message, 0, (struct sockaddr *)&kernel, sizeof kernel) == (ssize_t)sizeof message) {
        union { struct nlmsghdr header; char bytes[8192]; } answer;
        ssize_t length = recv(fd, &answer, sizeof answer, 0);
        if (length >= (ssize_t)NLMSG_LENGTH(sizeof(struct inet_diag_msg)) && NLMSG_OK(&answer.header, (unsigned)length)
            && answer.header.nlmsg_type == SOCK_DIAG_BY_FAMILY) {
            const struct inet_diag_msg *found = (const struct inet_diag_msg *)NLMSG_DATA(&answer.header);
            uid = found->idiag_uid;
        }
    }
    close(fd);
    return uid;
}

#endif
