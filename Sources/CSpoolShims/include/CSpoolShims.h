#ifndef CSPOOLSHIMS_H
#define CSPOOLSHIMS_H

/// syncfs(2): flush every dirty page and inode of the file system holding `fd`. Glibc declares
/// it only under _GNU_SOURCE, which Swift's Glibc module does not set.
int spoold_syncfs(int fd);

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
