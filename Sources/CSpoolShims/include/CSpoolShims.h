#ifndef CSPOOLSHIMS_H
#define CSPOOLSHIMS_H

/// syncfs(2): flush every dirty page and inode of the file system holding `fd`. Glibc declares
/// it only under _GNU_SOURCE, which Swift's Glibc module does not set.
int spoold_syncfs(int fd);

/// fcntl(fd, F_SETLEASE, F_RDLCK): fails with EAGAIN while any process holds the file open for
/// writing; EACCES when we are neither its owner nor hold CAP_LEASE. F_SETLEASE is _GNU_SOURCE only.
int spoold_take_read_lease(int fd);

/// fcntl(fd, F_SETLEASE, F_UNLCK): gives a lease back.
int spoold_release_lease(int fd);

#endif
