/* The worker's watch child: connect (bounded), say its hello when it has a key (a fresh nonce,
 * rdvauth.h), shed what it inherited, confine, read the head's rendezvous with the bounded parsers
 * (rdvmsg.c, or rdvauth.c checking each tag), exit with what it read. Sends nothing once confined.
 * When to start it and what its end means for the pod is the supervisor's (init/supervise.c). */
#include "rdvwatch.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "address.h"
#include "helper.h"
#include "rdvauth.h"
#include "rdvmsg.h"
#include "sandbox.h"
#include "scrub.h"
#include "secrets.h"

/* The child's exit codes. */
#define WATCH_EXIT_FINISHED 0
#define WATCH_EXIT_CONFINE 1 /* set-up or confinement failed */
#define WATCH_EXIT_CLOSED 3  /* the head closed (or reset) without FINISHED */
#define WATCH_EXIT_CONNECT 4 /* no connection: refused, unreachable, timeout */
#define WATCH_EXIT_BAD 5     /* bytes that are not rayboot's rendezvous */

/* A rule of the watch's filter, named "watch-CALL" (tests knock each out by that name). */
#define WATCH_ALLOW(call)                                                                                              \
    {                                                                                                                  \
        "watch-" #call, SCMP_SYS(call), 0, {{0}}, 0                                                                    \
    }

/* The child's allowlist once connected: wait, read, exit (no write of any kind, no connect, no
 * open: what it reads can make it do nothing but exit). tests/contract/test_rendezvous_finished.py
 * proves each needed. */
static const struct sandbox_rule rdvwatch_rules[] = {
    WATCH_ALLOW(poll),            /* the one wait, on the connection */
    WATCH_ALLOW(recvfrom),        /* recv(2): the head's bytes, at most RENDEZVOUS_READ_MAX + 1 */
    WATCH_ALLOW(restart_syscall), /* a poll stopped by SIGSTOP and continued */
    WATCH_ALLOW(munmap),          /* seccomp_release, when loading took a new group of memory */
    WATCH_ALLOW(exit_group),      /* _exit(2) */
};

/* A non-blocking connect given RDVWATCH_CONNECT_TIMEOUT_MS. The socket, or -1. */
static int connect_bounded(const char *addr, int port)
{
    struct sockaddr_storage ss;
    socklen_t len;
    struct errbuf err;
    struct pollfd pfd;
    int sock_err = 0, fd;
    socklen_t elen = sizeof(sock_err);
    if (address_sockaddr(addr, port, &ss, &len, &err) < 0)
        return -1;
    fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, (struct sockaddr *)&ss, len) == 0)
        return fd;
    if (errno != EINPROGRESS)
        goto fail;
    pfd = (struct pollfd){fd, POLLOUT, 0};
    if (poll(&pfd, 1, RDVWATCH_CONNECT_TIMEOUT_MS) != 1)
        goto fail;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &sock_err, &elen) < 0 || sock_err != 0)
        goto fail;
    return fd;
fail:
    close(fd);
    return -1;
}

/* What the watch checks the head's words with: nothing (version 1), or the key, its nonce and the
 * cluster's id. */
struct watch_auth {
    const struct hmac_sha256_key *key;
    uint8_t nonce[RDVAUTH_NONCE_BYTES];
    const char *cluster_id;
};

static enum rendezvous_parse_result parse(const struct watch_auth *a, const char *buf, size_t len, size_t *used)
{
    if (a->key)
        return rdvauth_parse(a->key, a->nonce, a->cluster_id, buf, len, used);
    return rendezvous_parse(buf, len, used);
}

/* Confined: reads until FINISHED, the end of the connection, or bytes not ours (a wrong tag
 * included). Never returns. */
static void watch(int fd, const struct watch_auth *a)
{
    char buf[RDVAUTH_READ_MAX + 1];
    size_t len = 0, used;
    _Static_assert(RDVAUTH_READ_MAX >= RENDEZVOUS_READ_MAX, "the buffer holds either version's message");
    for (;;) {
        struct pollfd pfd = {fd, POLLIN, 0};
        ssize_t n;
        if (poll(&pfd, 1, -1) < 0)
            continue; /* EINTR */
        n = recv(fd, buf + len, sizeof(buf) - len, 0);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        if (n <= 0)
            _exit(WATCH_EXIT_CLOSED);
        len += (size_t)n;
        /* Every whole message off the front: SERVING and FINISHED may come in one read. */
        for (;;) {
            enum rendezvous_parse_result r = parse(a, buf, len, &used);
            if (r == RENDEZVOUS_FINISHED)
                _exit(WATCH_EXIT_FINISHED);
            if (r == RENDEZVOUS_BAD)
                _exit(WATCH_EXIT_BAD);
            if (r == RENDEZVOUS_INCOMPLETE)
                break;
            memmove(buf, buf + used, len - used);
            len -= used;
        }
    }
}

/* With a key: a fresh nonce, said in the hello, before the filter (which has no getrandom and
 * no send). 0, or -1 when it could not be said. */
static int greet(int fd, struct watch_auth *a)
{
    char hello[RDVAUTH_HELLO_BYTES];
    if (!a->key)
        return 0;
    if (getrandom(a->nonce, sizeof(a->nonce), 0) != (ssize_t)sizeof(a->nonce))
        return -1;
    rdvauth_hello(a->nonce, hello);
    /* A fresh socket's send buffer takes these few bytes at once. */
    return send(fd, hello, sizeof(hello), MSG_NOSIGNAL) == (ssize_t)sizeof(hello) ? 0 : -1;
}

static void child_main(const char *addr, int port, pid_t parent, struct watch_auth *a)
{
    struct errbuf err;
    int fd;
    /* rayboot's signals are blocked for its signalfd: the watch ends by SIGKILL, with rayboot. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
        _exit(WATCH_EXIT_CONFINE);
    fd = connect_bounded(addr, port);
    if (fd < 0)
        _exit(WATCH_EXIT_CONNECT);
    if (greet(fd, a) < 0)
        _exit(WATCH_EXIT_CLOSED);
    scrub_fds_but(fd, -1);
    if (secrets_shed(&err) < 0 ||
        sandbox_confine_only(rdvwatch_rules, sizeof(rdvwatch_rules) / sizeof(rdvwatch_rules[0]), &err) < 0)
        _exit(WATCH_EXIT_CONFINE);
    watch(fd, a);
}

/* What the child is given. */
struct watch_args {
    const char *addr;
    int port;
    pid_t parent;
    struct watch_auth auth;
};

static int child(int no_channel, void *arg)
{
    struct watch_args *a = arg;
    (void)no_channel; /* its outcome is its exit status */
    child_main(a->addr, a->port, a->parent, &a->auth);
    return WATCH_EXIT_CONFINE;
}

int rdvwatch_start(struct rdvwatch *w, const char *addr, int port, const struct hmac_sha256_key *key,
                   const char *cluster_id, struct errbuf *err)
{
    struct watch_args a = {addr, port, getpid(), {key, {0}, cluster_id}};
    return helper_start(&w->pid, NULL, -1, -1, child, &a, err);
}

enum rdvwatch_outcome rdvwatch_outcome(int status, struct errbuf *err)
{
    err->msg[0] = '\0';
    if (WIFSIGNALED(status)) {
        if (WTERMSIG(status) == SIGSYS)
            errbuf_set(err, "killed by SIGSYS: it made a system call outside its seccomp allowlist (a rayboot bug; "
                            "please report it)");
        else
            errbuf_set(err, "killed by signal %d", WTERMSIG(status));
        return RDVWATCH_FAILED;
    }
    switch (WIFEXITED(status) ? WEXITSTATUS(status) : -1) {
    case WATCH_EXIT_FINISHED:
        return RDVWATCH_FINISHED;
    case WATCH_EXIT_CLOSED:
        errbuf_set(err, "the head closed it without FINISHED");
        return RDVWATCH_LOST;
    case WATCH_EXIT_CONNECT:
        errbuf_set(err, "no connection (refused, unreachable or no answer within %d ms)", RDVWATCH_CONNECT_TIMEOUT_MS);
        return RDVWATCH_UNREACHABLE;
    case WATCH_EXIT_BAD:
        errbuf_set(err, "it sent something other than rayboot's rendezvous messages (with Ray's token: a message "
                        "without the head's tag for this worker's nonce and cluster)");
        return RDVWATCH_BAD;
    default:
        errbuf_set(err, "its set-up or confinement failed (exit %d)", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        return RDVWATCH_FAILED;
    }
}

void rdvwatch_stop(struct rdvwatch *w)
{
    /* No channel tells it to end, and rayboot's signals are blocked in it: no grace. */
    helper_stop(&w->pid, NULL, 0, NULL);
}
