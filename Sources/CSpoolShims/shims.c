#define _GNU_SOURCE
#include <signal.h>
#include <sys/signalfd.h>
#include <ucontext.h>
#include <unistd.h>
#include "CSpoolShims.h"

int spoold_syncfs(int fd) { return syncfs(fd); }

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
