/* The rendezvous' listening child (the head). It accepts, holds, writes SERVING then FINISHED and
 * closes. Without Ray's token the messages are fixed and nothing is read: a byte from a worker,
 * or its hanging up, only closes that connection. With it, the one thing read is a worker's hello
 * (its nonce, bounded and parsed by rdvauth.c), and each answer is tagged for that nonce; anything
 * more closes the connection. docs/security.md (ports). */
#include "rendezvous.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helper.h"
#include "monotime.h"
#include "rdvauth.h"
#include "sandbox.h"
#include "scrub.h"
#include "secrets.h"

/* The control socket's messages: the GCS is SERVING; the head's command has FINISHED; the
 * cluster's id (the byte, then the id) for FINISHED's tag. */
#define CONTROL_SERVING 'S'
#define CONTROL_FINISHED 'F'
#define CONTROL_CLUSTER_ID 'C'
#define CONTROL_MAX_BYTES (1 + RDVAUTH_CLUSTER_ID_MAX_BYTES)

/* A held connection is let go after this long: a worker whose node vanished without a FIN
 * would otherwise keep its slot and descriptor for the whole job, and so would a stranger's idle
 * one. A live worker connects again: a waiting one within 2 s (lib/ray/gcswait.c), a joined one
 * within 30 s (init/supervise.c), looking at its head every 2 s meanwhile. */
#define RENDEZVOUS_HOLD_MS (60L * 60 * 1000)
/* After an accept4 that failed for want of descriptors or memory (EMFILE, ENFILE, ENOBUFS,
 * ENOMEM), the listener is left alone this long: it stays readable, and polling it again at once
 * spun the child at 90% of a CPU (issue 28). Workers in the backlog wait that much longer. */
#define RENDEZVOUS_ACCEPT_PAUSE_MS 200
/* Descriptors kept free below RLIMIT_NOFILE: stdio, the listener, the control socket and the
 * one accept4 that makes room by evicting the oldest held connection. */
#define RENDEZVOUS_SPARE_FDS 8
/* Closing the control socket ends the child's loop at once; one that does not go is killed. */
#define RENDEZVOUS_STOP_GRACE_MS 200

/* The child's allowlist: what its loop calls, nothing more (no open, no connect, no read of a
 * worker's bytes: recv is for the control socket). */
static const struct sandbox_rule rendezvous_rules[] = {
    SANDBOX_ALLOW(poll),            /* the loop's one wait: control socket, listening socket, held ones */
    SANDBOX_ALLOW(accept4),         /* a worker's connection, non-blocking */
    SANDBOX_ALLOW(sendto),          /* send(2): the message, MSG_NOSIGNAL */
    SANDBOX_ALLOW(recvfrom),        /* recv(2): the control socket; with a token, a worker's hello */
    SANDBOX_ALLOW(close),           /* a connection told, hung up, evicted or held too long */
    SANDBOX_ALLOW(clock_gettime),   /* the holds' and the pause's deadlines: the vDSO, a syscall without one */
    SANDBOX_ALLOW(restart_syscall), /* a poll stopped by SIGSTOP and continued */
    SANDBOX_ALLOW(munmap),          /* the filter's own memory, freed once it is loaded (seccomp_release) */
    SANDBOX_ALLOW(exit_group),      /* _exit(2) */
};

/* Where the head is: waiting for its GCS, serving (connections held, each told SERVING), or its
 * command finished (each told both and closed). */
enum holder_state { HOLD_WAITING, HOLD_SERVING, HOLD_FINISHED };

/* A held connection: with a key, answered only once its hello (the nonce) is whole. */
struct conn {
    int fd;
    long since_ms; /* when it was accepted: the oldest is evicted */
    bool greeted;  /* its nonce is known (always true without a key: nothing is waited for) */
    uint8_t got;   /* bytes of the hello read so far */
    char hello[RDVAUTH_HELLO_BYTES];
    uint8_t nonce[RDVAUTH_NONCE_BYTES];
};

struct holder {
    int listen_fd;
    int control_fd;
    enum holder_state state;
    const struct hmac_sha256_key *key; /* Ray's token's, or NULL: version 1's fixed messages */
    char cluster_id[RDVAUTH_CLUSTER_ID_MAX_BYTES];
    size_t cap;           /* RENDEZVOUS_MAX_HELD, or fewer when RLIMIT_NOFILE is lower */
    long paused_until_ms; /* the listener is not polled before then (an accept4 failed) */
    size_t held;
    struct conn conns[RENDEZVOUS_MAX_HELD];
    struct pollfd pfds[RENDEZVOUS_MAX_HELD + 2];
};

/* A fresh socket's send buffer takes these few bytes at once; a worker that is gone is no matter. */
static void say(int fd, const char *message, size_t len)
{
    (void)!send(fd, message, len, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* SERVING or FINISHED to one greeted connection: tagged for its nonce with a key, fixed without. */
static void tell(const struct holder *h, const struct conn *c, enum rendezvous_parse_result what)
{
    static const char serving[] = RENDEZVOUS_MESSAGE, finished[] = RENDEZVOUS_FINISHED_MESSAGE;
    char answer[RDVAUTH_ANSWER_MAX_BYTES];
    if (h->key)
        say(c->fd, answer, rdvauth_answer(h->key, c->nonce, what, h->cluster_id, answer));
    else if (what == RENDEZVOUS_SERVING)
        say(c->fd, serving, sizeof(serving) - 1);
    else
        say(c->fd, finished, sizeof(finished) - 1);
}

static void drop_held(struct holder *h, size_t i)
{
    close(h->conns[i].fd);
    h->conns[i] = h->conns[--h->held];
}

/* What a greeted connection is owed now: SERVING once the GCS serves; both, and closed, once the
 * command finished. */
static void tell_what_is_known(struct holder *h, size_t i)
{
    if (h->state == HOLD_WAITING)
        return;
    tell(h, &h->conns[i], RENDEZVOUS_SERVING);
    if (h->state == HOLD_FINISHED) {
        tell(h, &h->conns[i], RENDEZVOUS_FINISHED);
        drop_held(h, i);
    }
}

/* The oldest held connection gives way: a full house never locks a later worker out, and a
 * stranger's connections are the first to go once others come. */
static void evict_oldest(struct holder *h)
{
    size_t oldest = 0;
    for (size_t i = 1; i < h->held; i++)
        if (h->conns[i].since_ms < h->conns[oldest].since_ms)
            oldest = i;
    drop_held(h, oldest);
}

/* A new connection: held (the oldest evicted when all slots are taken), and told what is known
 * once it is greeted (at once without a key). */
static void take(struct holder *h, int fd, long now_ms)
{
    struct conn *c;
    if (h->held >= h->cap)
        evict_oldest(h);
    c = &h->conns[h->held++];
    memset(c, 0, sizeof(*c));
    c->fd = fd;
    c->since_ms = now_ms;
    c->greeted = h->key == NULL;
    if (c->greeted)
        tell_what_is_known(h, h->held - 1);
}

/* A held connection is readable: with a key, more of its hello (a whole one greets it, anything
 * else closes it); once greeted, or without a key, a byte or a hang-up closes it. */
static void readable(struct holder *h, size_t i)
{
    struct conn *c = &h->conns[i];
    ssize_t n;
    int r;
    if (c->greeted) {
        drop_held(h, i);
        return;
    }
    n = recv(c->fd, c->hello + c->got, sizeof(c->hello) - c->got, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        drop_held(h, i);
        return;
    }
    c->got = (uint8_t)(c->got + n);
    r = rdvauth_parse_hello(c->hello, c->got, c->nonce);
    if (r < 0) {
        drop_held(h, i);
    } else if (r == 1) {
        c->greeted = true;
        tell_what_is_known(h, i);
    }
}

static void accept_all(struct holder *h)
{
    for (;;) {
        int fd = accept4(h->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
            take(h, fd, monotime_ms());
            continue;
        }
        if (errno == EINTR || errno == ECONNABORTED)
            continue; /* a connection reset before it was accepted: the next one may be there */
        /* EAGAIN: all taken. Anything else (no descriptor, no memory) leaves the listener readable:
         * it is let alone for a while instead of polled again at once. */
        if (errno != EAGAIN) /* EWOULDBLOCK is EAGAIN on Linux */
            h->paused_until_ms = monotime_ms() + RENDEZVOUS_ACCEPT_PAUSE_MS;
        return;
    }
}

/* A message from rayboot: SERVING or FINISHED, each acted on once (FINISHED implies SERVING), or
 * the cluster's id. Those not yet greeted are told when they are; at FINISHED they are closed. */
static void control(struct holder *h, const char *msg, size_t len)
{
    if (len > 1 && msg[0] == CONTROL_CLUSTER_ID) {
        size_t n = len - 1 < sizeof(h->cluster_id) - 1 ? len - 1 : sizeof(h->cluster_id) - 1;
        memcpy(h->cluster_id, msg + 1, n);
        h->cluster_id[n] = '\0';
        return;
    }
    if (len != 1 || (msg[0] != CONTROL_SERVING && msg[0] != CONTROL_FINISHED))
        return;
    if (h->state == HOLD_WAITING) {
        h->state = HOLD_SERVING;
        for (size_t i = 0; i < h->held; i++)
            if (h->conns[i].greeted)
                tell(h, &h->conns[i], RENDEZVOUS_SERVING);
    }
    if (msg[0] == CONTROL_FINISHED && h->state == HOLD_SERVING) {
        h->state = HOLD_FINISHED;
        while (h->held > 0) {
            if (h->conns[h->held - 1].greeted)
                tell(h, &h->conns[h->held - 1], RENDEZVOUS_FINISHED);
            drop_held(h, h->held - 1);
        }
    }
}

/* Closes the connections held RENDEZVOUS_HOLD_MS; returns how long until the next is due (-1:
 * none held), capped by the listener's pause. */
static int expire_held(struct holder *h, long now_ms)
{
    long next = -1;
    for (size_t i = h->held; i-- > 0;) {
        long left = h->conns[i].since_ms + RENDEZVOUS_HOLD_MS - now_ms;
        if (left <= 0)
            drop_held(h, i);
        else if (next < 0 || left < next)
            next = left;
    }
    if (h->paused_until_ms > now_ms && (next < 0 || h->paused_until_ms - now_ms < next))
        next = h->paused_until_ms - now_ms;
    return (int)next;
}

static void hold_loop(struct holder *h)
{
    for (;;) {
        size_t n = 0, first_held, polled;
        long now = monotime_ms();
        int timeout_ms = expire_held(h, now);
        bool listening = now >= h->paused_until_ms;
        h->pfds[n++] = (struct pollfd){h->control_fd, POLLIN, 0};
        if (listening)
            h->pfds[n++] = (struct pollfd){h->listen_fd, POLLIN, 0};
        first_held = n;
        for (size_t i = 0; i < h->held; i++)
            h->pfds[n++] = (struct pollfd){h->conns[i].fd, POLLIN, 0};
        polled = h->held;
        if (poll(h->pfds, n, timeout_ms) <= 0)
            continue; /* EINTR, or a deadline: looked at again above */
        /* Held connections first, from the last: a dropped one's slot takes one already looked at. */
        for (size_t i = polled; i-- > 0;)
            if (i < h->held && h->pfds[first_held + i].revents)
                readable(h, i);
        if (h->pfds[0].revents) {
            char msg[CONTROL_MAX_BYTES];
            ssize_t got = recv(h->control_fd, msg, sizeof(msg), 0);
            if (got <= 0 && !(got < 0 && errno == EINTR))
                _exit(0); /* rayboot is gone or stopping */
            if (got > 0)
                control(h, msg, (size_t)got);
        }
        if (listening && h->pfds[1].revents)
            accept_all(h);
    }
}

/* As many connections as RLIMIT_NOFILE leaves room for: a full house evicts its oldest instead
 * of meeting EMFILE. Read before the filter, which has no prlimit64. */
static size_t held_cap(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY ||
        rl.rlim_cur >= RENDEZVOUS_MAX_HELD + RENDEZVOUS_SPARE_FDS)
        return RENDEZVOUS_MAX_HELD;
    return rl.rlim_cur > RENDEZVOUS_SPARE_FDS ? (size_t)(rl.rlim_cur - RENDEZVOUS_SPARE_FDS) : 1;
}

static struct holder holder; /* static: the confined child allocates nothing */

static void child_main(int listen_fd, int control_fd, const struct hmac_sha256_key *key)
{
    struct errbuf err;
    size_t cap;
    scrub_fds_but(listen_fd, control_fd);
    cap = held_cap();
    if (secrets_shed(&err) < 0 ||
        sandbox_confine_only(rendezvous_rules, sizeof(rendezvous_rules) / sizeof(rendezvous_rules[0]), &err) < 0)
        _exit(1);
    holder.listen_fd = listen_fd;
    holder.control_fd = control_fd;
    holder.cap = cap;
    holder.key = key; /* the parent's copy, inherited: two hash states, not the token */
    hold_loop(&holder);
}

/* A listening socket of family on every address, or -1 with errno. */
static int listen_family(int family, int port)
{
    struct sockaddr_storage ss;
    socklen_t len;
    int one = 1, zero = 0, e;
    int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    memset(&ss, 0, sizeof(ss));
    if (family == AF_INET6) {
        struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
        /* One socket for both families: a worker may reach the head over either. */
        (void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        a6->sin6_addr = in6addr_any;
        len = sizeof(*a6);
    } else {
        struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        a4->sin_addr.s_addr = htonl(INADDR_ANY);
        len = sizeof(*a4);
    }
    (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&ss, len) == 0 && listen(fd, RENDEZVOUS_MAX_HELD) == 0)
        return fd;
    e = errno;
    close(fd);
    errno = e;
    return -1;
}

/* IPv4 alone only in a pod without IPv6: a port taken on either family (a process that bound
 * [::1]:8079, or 0.0.0.0:8079) is refused, never worked around, or the workers that reach the
 * head over that family would hear whoever holds it (issue 28). */
static int listen_on(int port, struct errbuf *err)
{
    int fd = listen_family(AF_INET6, port);
    if (fd >= 0)
        return fd;
    if (errno != EAFNOSUPPORT && errno != EADDRNOTAVAIL && errno != EPROTONOSUPPORT)
        return errbuf_set(err, "port %d: %s", port, strerror(errno));
    fd = listen_family(AF_INET, port);
    if (fd < 0)
        return errbuf_set(err, "port %d: %s", port, strerror(errno));
    return fd;
}

/* What the child is given: the listening socket and the key. */
struct child_args {
    int listen_fd;
    const struct hmac_sha256_key *key;
};

static int child(int control_fd, void *arg)
{
    const struct child_args *a = arg;
    child_main(a->listen_fd, control_fd, a->key);
    return 0;
}

int rendezvous_start(struct rendezvous *r, int port, const struct hmac_sha256_key *key, struct errbuf *err)
{
    int sv[2], rc;
    struct child_args a = {-1, key};
    r->pid = -1;
    r->fd = -1;
    a.listen_fd = listen_on(port, err);
    if (a.listen_fd < 0)
        return RENDEZVOUS_NO_PORT;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
        close(a.listen_fd);
        return errbuf_set(err, "socketpair: %s", strerror(errno));
    }
    rc = helper_start(&r->pid, &r->fd, sv[0], sv[1], child, &a, err);
    close(a.listen_fd); /* the child's */
    return rc;
}

/* One control message to the child; a child that is gone or busy is no matter (it exits with us). */
static void send_control(struct rendezvous *r, const char *msg, size_t len)
{
    if (r->fd >= 0)
        (void)!send(r->fd, msg, len, MSG_NOSIGNAL | MSG_DONTWAIT);
}

void rendezvous_cluster_id(struct rendezvous *r, const char *id)
{
    char msg[CONTROL_MAX_BYTES];
    size_t n = strnlen(id, RDVAUTH_CLUSTER_ID_MAX_BYTES - 1);
    msg[0] = CONTROL_CLUSTER_ID;
    memcpy(msg + 1, id, n);
    if (n > 0)
        send_control(r, msg, n + 1);
}

void rendezvous_serving(struct rendezvous *r)
{
    static const char msg = CONTROL_SERVING;
    send_control(r, &msg, 1);
}

void rendezvous_finished(struct rendezvous *r)
{
    static const char msg = CONTROL_FINISHED;
    send_control(r, &msg, 1);
}

void rendezvous_stop(struct rendezvous *r)
{
    helper_stop(&r->pid, &r->fd, RENDEZVOUS_STOP_GRACE_MS, NULL);
}
