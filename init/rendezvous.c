/* The rendezvous' listening child (the head). The child reads nothing from the network: it
 * accepts, holds, writes two fixed messages (SERVING, then FINISHED) and closes; a byte from a
 * worker, or its hanging up, only closes that connection. docs/security.md (ports). */
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

#include "monotime.h"
#include "sandbox.h"
#include "scrub.h"
#include "secrets.h"

/* The control socket's messages: the GCS is SERVING; the head's command has FINISHED. */
#define CONTROL_SERVING 'S'
#define CONTROL_FINISHED 'F'

/* A held connection is let go after this long: a worker whose node vanished without a FIN
 * would otherwise keep its slot and descriptor for the whole job, and so would a stranger's idle
 * one. A live worker takes it up again at once (init/rdvwatch.h, lib/ray/gcswait.c). */
#define RENDEZVOUS_HOLD_MS (60L * 60 * 1000)
/* After an accept4 that failed for want of descriptors or memory (EMFILE, ENFILE, ENOBUFS,
 * ENOMEM), the listener is left alone this long: it stays readable, and polling it again at once
 * spun the child at 90% of a CPU (issue 28). Workers in the backlog wait that much longer. */
#define RENDEZVOUS_ACCEPT_PAUSE_MS 200
/* Descriptors kept free below RLIMIT_NOFILE: stdio, the listener, the control socket and the
 * one accept4 that makes room by evicting the oldest held connection. */
#define RENDEZVOUS_SPARE_FDS 8

/* The child's allowlist: what its loop calls, nothing more (no open, no connect, no read of a
 * worker's bytes: recv is for the control socket). */
static const struct sandbox_rule rendezvous_rules[] = {
    SANDBOX_ALLOW(poll),            /* the loop's one wait: control socket, listening socket, held ones */
    SANDBOX_ALLOW(accept4),         /* a worker's connection, non-blocking */
    SANDBOX_ALLOW(sendto),          /* send(2): the message, MSG_NOSIGNAL */
    SANDBOX_ALLOW(recvfrom),        /* recv(2) on the control socket only */
    SANDBOX_ALLOW(close),           /* a connection told, hung up, evicted or held too long */
    SANDBOX_ALLOW(clock_gettime),   /* the holds' and the pause's deadlines: the vDSO, a syscall without one */
    SANDBOX_ALLOW(restart_syscall), /* a poll stopped by SIGSTOP and continued */
    SANDBOX_ALLOW(munmap),          /* the filter's own memory, freed once it is loaded (seccomp_release) */
    SANDBOX_ALLOW(exit_group),      /* _exit(2) */
};

/* Where the head is: waiting for its GCS, serving (connections held, each told SERVING), or its
 * command finished (each told both and closed). */
enum holder_state { HOLD_WAITING, HOLD_SERVING, HOLD_FINISHED };

struct holder {
    int listen_fd;
    int control_fd;
    enum holder_state state;
    size_t cap;           /* RENDEZVOUS_MAX_HELD, or fewer when RLIMIT_NOFILE is lower */
    long paused_until_ms; /* the listener is not polled before then (an accept4 failed) */
    size_t held;
    int fds[RENDEZVOUS_MAX_HELD];
    long since_ms[RENDEZVOUS_MAX_HELD]; /* when each was accepted: the oldest is evicted */
    struct pollfd pfds[RENDEZVOUS_MAX_HELD + 2];
};

/* A fresh socket's send buffer takes these few bytes at once; a worker that is gone is no matter. */
static void say(int fd, const char *message, size_t len)
{
    (void)!send(fd, message, len, MSG_NOSIGNAL | MSG_DONTWAIT);
}

static void say_serving(int fd)
{
    static const char message[] = RENDEZVOUS_MESSAGE;
    say(fd, message, sizeof(message) - 1);
}

static void say_finished_and_close(int fd)
{
    static const char message[] = RENDEZVOUS_FINISHED_MESSAGE;
    say(fd, message, sizeof(message) - 1);
    close(fd);
}

static void drop_held(struct holder *h, size_t i)
{
    close(h->fds[i]);
    h->held--;
    h->fds[i] = h->fds[h->held];
    h->since_ms[i] = h->since_ms[h->held];
}

/* The oldest held connection gives way: a full house never locks a later worker out, and a
 * stranger's connections are the first to go once others come. */
static void evict_oldest(struct holder *h)
{
    size_t oldest = 0;
    for (size_t i = 1; i < h->held; i++)
        if (h->since_ms[i] < h->since_ms[oldest])
            oldest = i;
    drop_held(h, oldest);
}

/* A new connection: held (told SERVING first once the GCS serves), the oldest evicted when all
 * slots are taken. Once finished, it is told both lines and closed. */
static void take(struct holder *h, int fd, long now_ms)
{
    if (h->state != HOLD_WAITING)
        say_serving(fd);
    if (h->state == HOLD_FINISHED) {
        say_finished_and_close(fd);
        return;
    }
    if (h->held >= h->cap)
        evict_oldest(h);
    h->fds[h->held] = fd;
    h->since_ms[h->held++] = now_ms;
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
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            h->paused_until_ms = monotime_ms() + RENDEZVOUS_ACCEPT_PAUSE_MS;
        return;
    }
}

/* One byte from rayboot: SERVING or FINISHED, each acted on once (FINISHED implies SERVING). */
static void control(struct holder *h, char c)
{
    if (c != CONTROL_SERVING && c != CONTROL_FINISHED)
        return;
    if (h->state == HOLD_WAITING) {
        h->state = HOLD_SERVING;
        for (size_t i = 0; i < h->held; i++)
            say_serving(h->fds[i]);
    }
    if (c == CONTROL_FINISHED && h->state == HOLD_SERVING) {
        h->state = HOLD_FINISHED;
        while (h->held > 0)
            say_finished_and_close(h->fds[--h->held]);
    }
}

/* Closes the connections held RENDEZVOUS_HOLD_MS; returns how long until the next is due (-1:
 * none held), capped by the listener's pause. */
static int expire_held(struct holder *h, long now_ms)
{
    long next = -1;
    for (size_t i = h->held; i-- > 0;) {
        long left = h->since_ms[i] + RENDEZVOUS_HOLD_MS - now_ms;
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
        size_t n = 0, first_held;
        long now = monotime_ms();
        int timeout_ms = expire_held(h, now);
        bool listening = now >= h->paused_until_ms;
        h->pfds[n++] = (struct pollfd){h->control_fd, POLLIN, 0};
        if (listening)
            h->pfds[n++] = (struct pollfd){h->listen_fd, POLLIN, 0};
        first_held = n;
        for (size_t i = 0; i < h->held; i++)
            h->pfds[n++] = (struct pollfd){h->fds[i], POLLIN, 0};
        if (poll(h->pfds, n, timeout_ms) <= 0)
            continue; /* EINTR, or a deadline: looked at again above */
        /* Held connections first, from the last: a dropped one's slot takes one already looked at. */
        for (size_t i = h->held; i-- > 0;)
            if (h->pfds[first_held + i].revents)
                drop_held(h, i);
        if (h->pfds[0].revents) {
            char c = 0;
            ssize_t got = recv(h->control_fd, &c, 1, 0);
            if (got <= 0 && !(got < 0 && errno == EINTR))
                _exit(0); /* rayboot is gone or stopping */
            if (got == 1)
                control(h, c);
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

static void child_main(int listen_fd, int control_fd)
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

int rendezvous_start(struct rendezvous *r, int port, struct errbuf *err)
{
    int sv[2], listen_fd;
    pid_t pid;
    r->pid = -1;
    r->fd = -1;
    listen_fd = listen_on(port, err);
    if (listen_fd < 0)
        return RENDEZVOUS_NO_PORT;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
        close(listen_fd);
        return errbuf_set(err, "socketpair: %s", strerror(errno));
    }
    pid = fork();
    if (pid < 0) {
        close(listen_fd);
        close(sv[0]);
        close(sv[1]);
        return errbuf_set(err, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close(sv[0]);
        child_main(listen_fd, sv[1]);
        _exit(0);
    }
    close(listen_fd);
    close(sv[1]);
    r->pid = pid;
    r->fd = sv[0];
    return 0;
}

/* One control byte to the child; a child that is gone or busy is no matter (it exits with us). */
static void send_control(struct rendezvous *r, char c)
{
    if (r->fd >= 0)
        (void)!send(r->fd, &c, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
}

void rendezvous_serving(struct rendezvous *r)
{
    send_control(r, CONTROL_SERVING);
}

void rendezvous_finished(struct rendezvous *r)
{
    send_control(r, CONTROL_FINISHED);
}

void rendezvous_stop(struct rendezvous *r)
{
    if (r->fd >= 0)
        close(r->fd);
    r->fd = -1;
    if (r->pid > 0) {
        /* Closing the control socket ends its loop at once; a child that does not go is killed. */
        struct timespec pause = {0, 10 * 1000 * 1000};
        pid_t reaped = 0;
        for (int i = 0; i < 20 && (reaped = waitpid(r->pid, NULL, WNOHANG)) == 0; i++)
            nanosleep(&pause, NULL);
        if (reaped == 0) {
            kill(r->pid, SIGKILL);
            waitpid(r->pid, NULL, 0);
        }
    }
    r->pid = -1;
}
