#define _GNU_SOURCE
#include <unistd.h>
#include "CSpoolShims.h"

int spoold_syncfs(int fd) { return syncfs(fd); }
