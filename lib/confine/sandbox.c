/* The prober's seccomp filter (libseccomp): an allowlist, each rule with the call path that needs
 * it. tests/contract/test_seccomp_minimal.py proves every rule needed: a test build without it
 * dies by SIGSYS in a scenario that takes that path (or the test names the rare path that keeps
 * it). No open(2): files are read before confinement. docs/security.md (the seccomp allowlist). */
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include <seccomp.h>

/* The bits of socket(2)'s type argument that are the type; the rest are SOCK_NONBLOCK and
 * SOCK_CLOEXEC. */
#define SOCKET_TYPE_MASK 0xf

#define ALLOW SANDBOX_ALLOW
#define ALLOW_IF SANDBOX_ALLOW_IF
#define ALLOW_IF2 SANDBOX_ALLOW_IF2
#define ARG_EQ SANDBOX_ARG_EQ
#define ARG_MASKED_EQ SANDBOX_ARG_MASKED_EQ
/* socket(family, type, protocol): the protocol too, so that MPTCP (IPPROTO_MPTCP), SCTP or
 * UDP-Lite, which ride on AF_INET with the same types, are refused. */
#define ALLOW_SOCKET(name, family, type, protocol)                                                                     \
    {                                                                                                                  \
        name, SCMP_SYS(socket), 3, {ARG_EQ(0, family), ARG_MASKED_EQ(1, SOCKET_TYPE_MASK, type), ARG_EQ(2, protocol)}, \
            0                                                                                                          \
    }

static const struct sandbox_rule prober_rules[] = {
    /* Sockets: only IPv4 and IPv6, only TCP and UDP (no raw, packet, netlink or unix sockets, no
     * MPTCP, SCTP or UDP-Lite), each with the protocol number its caller passes. */
    ALLOW_SOCKET("socket-AF_INET-SOCK_DGRAM-0", AF_INET, SOCK_DGRAM, 0),   /* c-ares: a DNS query over UDP */
    ALLOW_SOCKET("socket-AF_INET-SOCK_STREAM-0", AF_INET, SOCK_STREAM, 0), /* the TCP probe, c-ares over TCP */
    ALLOW_SOCKET("socket-AF_INET-SOCK_STREAM-IPPROTO_TCP", AF_INET, SOCK_STREAM, IPPROTO_TCP), /* libcurl to a GCS */
    ALLOW_SOCKET("socket-AF_INET6-SOCK_DGRAM-0", AF_INET6, SOCK_DGRAM, 0),   /* c-ares: an IPv6 nameserver */
    ALLOW_SOCKET("socket-AF_INET6-SOCK_STREAM-0", AF_INET6, SOCK_STREAM, 0), /* the TCP probe: an IPv6 GCS */
    ALLOW_SOCKET("socket-AF_INET6-SOCK_STREAM-IPPROTO_TCP", AF_INET6, SOCK_STREAM, IPPROTO_TCP), /* libcurl, IPv6 */
    ALLOW(connect), /* TCP probe, libcurl to the GCS, c-ares to its nameserver (UDP and TCP) */
    ALLOW_IF("fcntl-F_GETFL", fcntl, ARG_EQ(1, F_GETFL)), /* O_NONBLOCK, read first: c-ares, libcurl */
    ALLOW_IF("fcntl-F_SETFL", fcntl, ARG_EQ(1, F_SETFL)), /* O_NONBLOCK set: c-ares, libcurl (curlx_nonblock) */
    ALLOW_IF("fcntl-F_SETFD", fcntl, ARG_EQ(1, F_SETFD)), /* FD_CLOEXEC on every socket c-ares opens */
    /* The one option anything sets (an strace of every scenario): no buffer sizes, no device binding. */
    ALLOW_IF2("setsockopt-TCP_NODELAY", setsockopt, ARG_EQ(1, IPPROTO_TCP), /* libcurl, c-ares' TCP sockets */
              ARG_EQ(2, TCP_NODELAY)),
    ALLOW(getsockopt),  /* SO_ERROR after a non-blocking connect: TCP probe, libcurl's verifyconnect */
    ALLOW(getsockname), /* libcurl: the connection's local address (Curl_conninfo_local) */
    ALLOW(poll),        /* every wait on sockets: TCP probe, dns.c's loop, libcurl's multi (Curl_poll) */
    ALLOW(sendto),      /* send(2): replies to the parent, c-ares' UDP queries, libcurl's HTTP/2 frames */
    ALLOW(recvfrom),    /* recv(2): the parent's requests, DNS replies (UDP and TCP), HTTP/2 frames */
    ALLOW(writev),      /* c-ares 1.18 sends DNS over TCP with writev (a truncated UDP answer) */
    ALLOW(close),       /* every socket closed: c-ares, libcurl, TCP probe */
    /* musl's malloc (mallocng), which c-ares, libcurl and nghttp2 call on every request. Never
     * executable memory: mmap without PROT_EXEC, mprotect only to read+write. */
    ALLOW_IF("mmap", mmap, ARG_MASKED_EQ(2, PROT_EXEC, 0)), /* malloc: a new group or a block >= 128 KiB */
    ALLOW(munmap),                                          /* free: a whole group or a large block */
    ALLOW_IF("madvise", madvise, ARG_EQ(2, MADV_FREE)),     /* free: pages inside a slot of a kept group */
    ALLOW_IF("mremap", mremap, ARG_EQ(3, MREMAP_MAYMOVE)),  /* realloc of a block >= 128 KiB (big node list) */
    ALLOW(brk),                                             /* malloc: a new page of its metadata area */
    ALLOW_IF("mprotect", mprotect, ARG_EQ(2, PROT_READ | PROT_WRITE)), /* the same when brk fails: mmap'd */
    /* The rest. */
    ALLOW(clock_gettime),   /* every timeout (libcurl, c-ares, ours): the vDSO, a syscall on vDSO-less clocks */
    ALLOW(restart_syscall), /* the kernel's resumption of a poll stopped by SIGSTOP and continued */
    ALLOW(exit_group),      /* _exit(2) (musl has no other way out) */
};

#if defined(RAYBOOT_SECCOMP_DROP) || defined(RAYBOOT_SECCOMP_TEST_BRK_FAILS)
/* Test builds only (build/knockout/, never `make all`): RAYBOOT_SECCOMP_DROP="name" leaves one rule
 * out, to prove it needed. The marker lets tests tell such a binary from a release one. */
#define SANDBOX_TEST_BUILD 1
const char *volatile sandbox_test_build_marker = "rayboot seccomp test build, not for release";
#endif

/* What the filter does with a call a rule names: allow it or answer its errno, except in test
 * builds. */
static uint32_t rule_action(const struct sandbox_rule *r)
{
#ifdef RAYBOOT_SECCOMP_TEST_BRK_FAILS
    /* Test builds only: brk fails as when the heap cannot grow, so malloc takes its mmap path. */
    if (strcmp(r->name, "brk") == 0)
        return SCMP_ACT_ERRNO(ENOMEM);
#endif
    return r->errno_answer ? SCMP_ACT_ERRNO((uint32_t)r->errno_answer) : SCMP_ACT_ALLOW;
}

#ifdef RAYBOOT_SECCOMP_DROP
/* A knockout of the worker's watch's rule ("watch-poll", init/rdvwatch.c), or of one the prober
 * adds with Ray's TLS ("tls-getrandom", lib/ray/prober_child.c), leaves the prober's list whole:
 * only the rules added to it lose it. */
#define SANDBOX_DROP_PREFIX_WATCH "watch-"
#define SANDBOX_DROP_PREFIX_TLS "tls-"
#define SANDBOX_DROP_IS_PROBERS                                                                                        \
    (strncmp(RAYBOOT_SECCOMP_DROP, SANDBOX_DROP_PREFIX_WATCH, sizeof(SANDBOX_DROP_PREFIX_WATCH) - 1) != 0 &&           \
     strncmp(RAYBOOT_SECCOMP_DROP, SANDBOX_DROP_PREFIX_TLS, sizeof(SANDBOX_DROP_PREFIX_TLS) - 1) != 0)
#endif

static int add_more(scmp_filter_ctx ctx, const struct sandbox_rule *more, size_t n, struct errbuf *err)
{
    for (size_t i = 0; i < n; i++) {
        int rc;
#ifdef RAYBOOT_SECCOMP_DROP
        if (!SANDBOX_DROP_IS_PROBERS && strcmp(more[i].name, RAYBOOT_SECCOMP_DROP) == 0)
            continue;
#endif
        rc = seccomp_rule_add_array(ctx, rule_action(&more[i]), more[i].nr, more[i].nargs, more[i].args);
        if (rc < 0)
            return errbuf_set(err, "cannot add the seccomp rule %s (error %d)", more[i].name, -rc);
    }
    return 0;
}

static int add_rules(scmp_filter_ctx ctx, struct errbuf *err)
{
    size_t dropped = 0;
    for (size_t i = 0; i < sizeof(prober_rules) / sizeof(prober_rules[0]); i++) {
        const struct sandbox_rule *r = &prober_rules[i];
        int rc;
#ifdef RAYBOOT_SECCOMP_DROP
        if (strcmp(r->name, RAYBOOT_SECCOMP_DROP) == 0) {
            dropped++;
            continue;
        }
#endif
        rc = seccomp_rule_add_array(ctx, rule_action(r), r->nr, r->nargs, r->args);
        if (rc < 0)
            return errbuf_set(err, "cannot add the seccomp rule %s (error %d)", r->name, -rc);
    }
#ifdef SANDBOX_TEST_BUILD
    (void)sandbox_test_build_marker; /* a volatile read: keeps the marker in the binary */
#endif
#ifdef RAYBOOT_SECCOMP_DROP
    if (SANDBOX_DROP_IS_PROBERS && dropped != 1)
        return errbuf_set(err, "knockout build: no seccomp rule is named %s", RAYBOOT_SECCOMP_DROP);
#else
    (void)dropped;
#endif
    return 0;
}

int sandbox_confine_prober(struct errbuf *err)
{
    return sandbox_confine_prober_and(NULL, 0, err);
}

/* The filter: the prober's rules when with_prober, then n more. */
static int confine(bool with_prober, const struct sandbox_rule *more, size_t n, struct errbuf *err)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
    int rc;
    if (!ctx)
        return errbuf_set(err, "seccomp_init failed");
    if ((with_prober && add_rules(ctx, err) < 0) || add_more(ctx, more, n, err) < 0) {
        seccomp_release(ctx);
        return -1;
    }
    rc = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ? -errno : seccomp_load(ctx);
    seccomp_release(ctx);
    if (rc < 0)
        return errbuf_set(err, "cannot load the %s seccomp filter (error %d)", with_prober ? "prober's" : "helper's",
                          -rc);
    return 0;
}

int sandbox_confine_prober_and(const struct sandbox_rule *more, size_t n, struct errbuf *err)
{
    return confine(true, more, n, err);
}

int sandbox_confine_only(const struct sandbox_rule *rules, size_t n, struct errbuf *err)
{
    return confine(false, rules, n, err);
}
