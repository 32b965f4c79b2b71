/* The prober's seccomp filter, built with libseccomp. Each allowed call says why it is needed.
 * The set is what strace shows the confined prober using with musl, c-ares and libcurl (no
 * open(2): files are read before confinement), plus a few calls that rare paths need. */
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
    /* Seen under strace (tests/e2e traces the prober on both the head's and a worker's path). */
    ALLOW(recvfrom, "requests from the parent (recv), DNS replies, HTTP/2 frames"),
    ALLOW(sendto, "replies to the parent (send), DNS queries, HTTP/2 frames"),
    ALLOW(connect, "TCP to the GCS; UDP association to the nameserver"),
    ALLOW(getsockopt, "SO_ERROR after a non-blocking connect"),
    ALLOW(setsockopt, "libcurl sets TCP_NODELAY"),
    ALLOW(getsockname, "libcurl records the local address"),
    ALLOW(getpeername, "libcurl records the peer address"),
    ALLOW(fcntl, "O_NONBLOCK on sockets"),
    ALLOW(poll, "waiting on sockets"),
    ALLOW(close, "every socket we open"),
    ALLOW(mmap, "malloc of large blocks (musl)"),
    ALLOW(munmap, "free of large blocks"),
    ALLOW(brk, "malloc"),
    ALLOW(exit_group, "leaving"),
    /* Not seen in a normal run, but reachable: each would otherwise turn a rare path into a
     * crash. */
    ALLOW(mremap, "musl realloc of a large node list"),
    ALLOW(madvise, "musl malloc giving memory back"),
    ALLOW(clock_gettime, "timeouts, when the vDSO is not mapped"),
    ALLOW(writev, "libc's last words on stderr (musl writes with writev)"),
    ALLOW(rt_sigprocmask, "musl masks signals around abort()"),
    ALLOW(exit, "leaving"),
};

/* socket(2) only for the address families the prober needs. */
static int allow_sockets(scmp_filter_ctx ctx)
{
    static const int families[] = {AF_INET, AF_INET6};
    for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
        if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)families[i])) < 0)
            return -1;
    }
    return 0;
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
