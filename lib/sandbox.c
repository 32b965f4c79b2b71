/* The prober's seccomp filter, built with libseccomp. Each allowed call says why it is needed;
 * the set was taken from strace of the prober with musl, c-ares and libcurl (tests/e2e runs
 * the prober confined, and tests/unit proves that anything else is fatal). */
#include "sandbox.h"

#include <errno.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include <seccomp.h>

struct allowed {
    int nr;
    const char *why;
};

#define ALLOW(name, why) {SCMP_SYS(name), why}

static const struct allowed prober_syscalls[] = {
    ALLOW(read, "requests from the parent; replies from sockets"),
    ALLOW(write, "replies to the parent; log lines on stderr"),
    ALLOW(readv, "musl stdio"),
    ALLOW(writev, "musl stdio and log lines"),
    ALLOW(recvfrom, "DNS replies (c-ares), HTTP/2 frames (libcurl)"),
    ALLOW(sendto, "DNS queries, HTTP/2 frames"),
    ALLOW(recvmsg, "parent requests on the seqpacket socket"),
    ALLOW(sendmsg, "replies to the parent"),
    ALLOW(connect, "TCP to the GCS; UDP association to the nameserver"),
    ALLOW(getsockopt, "libcurl reads SO_ERROR after a non-blocking connect"),
    ALLOW(setsockopt, "libcurl sets TCP_NODELAY and keepalive"),
    ALLOW(getsockname, "libcurl records the local address"),
    ALLOW(getpeername, "libcurl records the peer address"),
    ALLOW(shutdown, "closing connections"),
    ALLOW(close, "every socket we open"),
    ALLOW(fcntl, "O_NONBLOCK on sockets"),
    ALLOW(poll, "waiting on sockets"),
    ALLOW(ppoll, "waiting on sockets (some libc paths)"),
    ALLOW(clock_gettime, "timeouts (when the vDSO is unavailable)"),
    ALLOW(gettimeofday, "libcurl timing fallback"),
    ALLOW(nanosleep, "none expected; harmless"),
    ALLOW(clock_nanosleep, "none expected; harmless"),
    ALLOW(brk, "malloc"),
    ALLOW(mmap, "malloc of large blocks"),
    ALLOW(munmap, "free of large blocks"),
    ALLOW(mremap, "musl realloc of large blocks"),
    ALLOW(madvise, "musl malloc returning memory"),
    ALLOW(rt_sigprocmask, "libc signal masking around internal locks"),
    ALLOW(rt_sigreturn, "returning from a signal handler"),
    ALLOW(getpid, "c-ares and libcurl seed ids"),
    ALLOW(getrandom, "c-ares query ids"),
    ALLOW(exit, "leaving"),
    ALLOW(exit_group, "leaving"),
};

/* socket(2) only for the address families the prober needs. */
static int allow_sockets(scmp_filter_ctx ctx)
{
    static const int families[] = {AF_INET, AF_INET6};
    for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
        if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)families[i])) < 0)
            return -1;
    }
    /* libcurl's wakeup pair for its internal multi handle. */
    return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socketpair), 1, SCMP_A0(SCMP_CMP_EQ, AF_UNIX));
}

int sandbox_confine_prober(struct errbuf *err)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
    int rc = 0;
    if (!ctx)
        return errbuf_set(err, "seccomp_init failed");
    for (size_t i = 0; rc == 0 && i < sizeof(prober_syscalls) / sizeof(prober_syscalls[0]); i++)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, prober_syscalls[i].nr, 0);
    if (rc == 0)
        rc = allow_sockets(ctx);
    /* musl's stdio asks whether stderr is a terminal; the answer "no" costs nothing. */
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOTTY), SCMP_SYS(ioctl), 1, SCMP_A1(SCMP_CMP_EQ, TIOCGWINSZ));
    if (rc == 0 && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        rc = -errno;
    if (rc == 0)
        rc = seccomp_load(ctx);
    seccomp_release(ctx);
    if (rc < 0)
        return errbuf_set(err, "cannot load the prober's seccomp filter (error %d)", -rc);
    return 0;
}
