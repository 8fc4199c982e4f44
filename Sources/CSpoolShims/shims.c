#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <stdio.h>
#include <ucontext.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <linux/tcp.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/vfs.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <sched.h>
#include "CSpoolShims.h"

int spoold_syncfs(int fd) { return syncfs(fd); }

int spoold_lists_in_hash_order(int fd) {
    struct statfs fs;
    if (fstatfs(fd, &fs) != 0 || fs.f_type != EXT4_SUPER_MAGIC) return 0;
    int flags = 0;
    if (ioctl(fd, FS_IOC_GETFLAGS, &flags) != 0) return 0;
    return (flags & FS_INDEX_FL) ? 1 : 0;
}

int spoold_cpus_allowed(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) return -1;
    return CPU_COUNT(&set);
}

int spoold_keep_thread_on_cpus(int count) {
    cpu_set_t set, kept;
    if (sched_getaffinity(0, sizeof(set), &set) != 0) return -1;
    CPU_ZERO(&kept);
    for (int cpu = 0, n = 0; cpu < CPU_SETSIZE && n < count; cpu++) {
        if (CPU_ISSET(cpu, &set)) { CPU_SET(cpu, &kept); n++; }
    }
    return sched_setaffinity(0, sizeof(kept), &kept);
}

int spoold_malloc_trim(void) { return malloc_trim(0); }

int spoold_memfd_create(const char *name) { return memfd_create(name, MFD_CLOEXEC); }

int spoold_forbid_core_dumps(void) { return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); }

int spoold_rename_noreplace(int olddirfd, const char *oldpath, int newdirfd, const char *newpath) {
    if (renameat2(olddirfd, oldpath, newdirfd, newpath, RENAME_NOREPLACE) == 0) return 0;
    if (errno != EINVAL) return -1;
    if (linkat(olddirfd, oldpath, newdirfd, newpath, 0) != 0) return -1;
    return unlinkat(olddirfd, oldpath, 0);
}

int spoold_fsetxattr(int fd, const char *name, const void *value, size_t size) {
    return fsetxattr(fd, name, value, size, 0);
}

long spoold_fgetxattr(int fd, const char *name, void *value, size_t size) {
    return (long)fgetxattr(fd, name, value, size);
}

int spoold_tcp_bytes_received(int fd, unsigned long long *bytes) {
    struct tcp_info info;
    socklen_t length = sizeof info;
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length) != 0) return -1;
    if (length < offsetof(struct tcp_info, tcpi_bytes_received) + sizeof info.tcpi_bytes_received) {
        errno = EOPNOTSUPP;
        return -1;
    }
    *bytes = info.tcpi_bytes_received;
    return 0;
}

int spoold_tcp_unsent_bytes(int fd, int *bytes) { return ioctl(fd, SIOCOUTQ, bytes); }

int spoold_o_noatime(void) { return O_NOATIME; }

int spoold_take_read_lease(int fd) { return fcntl(fd, F_SETLEASE, F_RDLCK); }

int spoold_release_lease(int fd) { return fcntl(fd, F_SETLEASE, F_UNLCK); }

int spoold_spawn_shell(const char *command, char *const envp[], int quiet, pid_t *pid) {
    posix_spawnattr_t attr;
    posix_spawn_file_actions_t actions;
    int rc = posix_spawnattr_init(&attr);
    if (rc != 0) return rc;
    rc = posix_spawn_file_actions_init(&actions);
    if (rc != 0) {
        posix_spawnattr_destroy(&attr);
        return rc;
    }
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    int reset[] = {SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGCHLD};
    for (unsigned i = 0; i < sizeof reset / sizeof reset[0]; i++) sigaddset(&defaults, reset[i]);
    if (rc == 0) rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    if (rc == 0) rc = posix_spawnattr_setpgroup(&attr, 0);
    if (rc == 0) rc = posix_spawnattr_setsigmask(&attr, &none);
    if (rc == 0) rc = posix_spawnattr_setsigdefault(&attr, &defaults);
    if (rc == 0) rc = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    if (rc == 0) {
        rc = quiet ? posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
                   : posix_spawn_file_actions_adddup2(&actions, 2, 1);
    }
    if (rc == 0) rc = posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    if (rc == 0) {
        char *const argv[] = {"sh", "-c", (char *)command, NULL};
        rc = posix_spawn(pid, "/bin/sh", &actions, &attr, argv, envp);
    }
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    return rc;
}

int spoold_pidfd_open(pid_t pid) {
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    errno = ENOSYS;
    return -1;
#endif
}

int spoold_child_has_exited(pid_t pid) {
    siginfo_t info;
    info.si_pid = 0;
    if (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT) < 0) return -1;
    return info.si_pid != 0;
}

/// A stop signal delivered to a thread that did not block it (one started before the mask was
/// set): block it in that thread once the handler returns (the saved mask is what sigreturn
/// restores) and queue it for the process again, where the signalfd reads it.
static void spoold_reroute_stop_signal(int sig, siginfo_t *info, void *context) {
    (void)info;
    ucontext_t *uc = context;
    sigaddset(&uc->uc_sigmask, sig);
    kill(getpid(), sig);
}

int spoold_stop_signals_open(void) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0) return -1;
    struct sigaction action = {0};
    action.sa_sigaction = spoold_reroute_stop_signal;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGTERM, &action, NULL) != 0 || sigaction(SIGINT, &action, NULL) != 0) return -1;
    return signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
}

int spoold_stop_signals_take(int fd) {
    struct signalfd_siginfo info;
    int count = 0;
    while (read(fd, &info, sizeof info) == (ssize_t)sizeof info) count++;
    return count;
}
