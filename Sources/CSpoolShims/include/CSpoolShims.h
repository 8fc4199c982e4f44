#ifndef CSPOOLSHIMS_H
#define CSPOOLSHIMS_H

#include <sys/types.h>

/// syncfs(2): flush every dirty page and inode of the file system holding `fd`. Glibc declares
/// it only under _GNU_SOURCE, which Swift's Glibc module does not set.
int spoold_syncfs(int fd);

/// 1 when the folder open at `fd` is listed in the order of its names' hashes, its positions
/// (d_off, seekdir) being those hashes: a folder of ext4's (or of ext2/3 through its driver)
/// with its hash-tree index flag set. 0 otherwise or when either call fails.
int spoold_lists_in_hash_order(int fd);

/// The CPUs this process may run on (sched_getaffinity), or -1.
int spoold_cpus_allowed(void);

/// Lets the calling thread run on the first `count` of the CPUs it may run on now (for tests).
int spoold_keep_thread_on_cpus(int count);

/// renameat2(RENAME_NOREPLACE): fails with EEXIST instead of replacing `newpath`. Where the
/// file system lacks the flag (EINVAL), linkat + unlinkat do the same (a crash between them
/// leaves both names: the caller's content twice, never lost). _GNU_SOURCE only.
int spoold_rename_noreplace(int olddirfd, const char *oldpath, int newdirfd, const char *newpath);

/// fsetxattr(2) / fgetxattr(2): <sys/xattr.h> is not in Swift's Glibc module.
int spoold_fsetxattr(int fd, const char *name, const void *value, size_t size);
long spoold_fgetxattr(int fd, const char *name, void *value, size_t size);

/// getsockopt(fd, IPPROTO_TCP, TCP_INFO): the bytes a TCP socket has received (tcpi_bytes_received,
/// Linux 4.1+), in `*bytes`. Returns 0, or -1 with errno (ENOTSOCK, EOPNOTSUPP for other sockets).
/// Glibc's <netinet/tcp.h> lacks the field; <linux/tcp.h> has it.
int spoold_tcp_bytes_received(int fd, unsigned long long *bytes);

/// ioctl(fd, SIOCOUTQ): bytes in a TCP socket's send queue, sent but not acknowledged or not yet
/// sent, in `*bytes`. Returns 0, or -1 with errno. ioctl is variadic, which Swift cannot call.
int spoold_tcp_unsent_bytes(int fd, int *bytes);

/// O_NOATIME, which glibc declares only under _GNU_SOURCE (not seen by Swift's Glibc module).
int spoold_o_noatime(void);

/// prctl(PR_SET_DUMPABLE, 0): no core dump of this process, and /proc/PID/ readable by root only
/// (no ptrace, no /proc/PID/environ or mem) for as long as it runs this image. prctl is variadic,
/// which Swift cannot call. Returns 0, or -1 with errno.
int spoold_forbid_core_dumps(void);

/// malloc_trim(0): returns the free pages of every malloc arena to the kernel. Declared in
/// <malloc.h>, which Swift's Glibc module does not include. Returns 1 if memory was released.
int spoold_malloc_trim(void);

/// memfd_create(name, MFD_CLOEXEC): a file in memory only, gone with its last descriptor.
/// _GNU_SOURCE only. Returns the descriptor, or -1 with errno.
int spoold_memfd_create(const char *name);

/// fcntl(fd, F_SETLEASE, F_RDLCK): fails with EAGAIN while any process holds the file open for
/// writing; EACCES when we are neither its owner nor hold CAP_LEASE. F_SETLEASE is _GNU_SOURCE only.
int spoold_take_read_lease(int fd);

/// fcntl(fd, F_SETLEASE, F_UNLCK): gives a lease back.
int spoold_release_lease(int fd);

/// posix_spawn(3) of `/bin/sh -c command` for a hook: in a new process group (so a timeout can
/// signal the shell and its children together), default signal dispositions and an empty signal
/// mask (the daemon ignores SIGPIPE, SIGTERM and SIGINT, which exec would otherwise pass on),
/// stdin from /dev/null, stdout onto the daemon's stderr (or /dev/null when `quiet`), every
/// descriptor above 2 closed (posix_spawn_file_actions_addclosefrom_np, glibc 2.34+).
/// Returns 0 and sets `*pid`, or an errno.
int spoold_spawn_shell(const char *command, char *const envp[], int quiet, pid_t *pid);

/// pidfd_open(2): a descriptor that polls readable when `pid` exits; -1 with errno if the
/// kernel lacks it (before Linux 5.3).
int spoold_pidfd_open(pid_t pid);

/// Whether child `pid` has exited, without reaping it (waitid with WEXITED|WNOHANG|WNOWAIT):
/// 1 exited, 0 still running, -1 with errno on error (ECHILD). `si_pid` is a macro Swift cannot see.
int spoold_child_has_exited(pid_t pid);

/// Blocks SIGTERM and SIGINT in the calling thread (threads it starts later inherit the mask),
/// installs a handler that sends either signal back to the process if it reaches a thread that
/// does not block it (and blocks it there for good), and returns a non-blocking, close-on-exec
/// signalfd(2) that reads them; -1 with errno on failure. Blocked signals stay pending across
/// execve(2), so a signal that arrives while the daemon re-executes itself is read by the new
/// image's signalfd. (signalfd is not in Swift's Glibc module.)
int spoold_stop_signals_open(void);

/// Reads every queued stop signal from `fd`; returns how many (0 when none).
int spoold_stop_signals_take(int fd);

#endif
