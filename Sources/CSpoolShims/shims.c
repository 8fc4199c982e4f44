#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>
#include "CSpoolShims.h"

int spoold_syncfs(int fd) { return syncfs(fd); }

int spoold_take_read_lease(int fd) { return fcntl(fd, F_SETLEASE, F_RDLCK); }

int spoold_release_lease(int fd) { return fcntl(fd, F_SETLEASE, F_UNLCK); }
