#ifndef CSPOOLSHIMS_H
#define CSPOOLSHIMS_H

/// syncfs(2): flush every dirty page and inode of the file system holding `fd`. Glibc declares
/// it only under _GNU_SOURCE, which Swift's Glibc module does not set.
int spoold_syncfs(int fd);

#endif
