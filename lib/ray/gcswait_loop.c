/* The wait for the head's GCS as the prober runs it: gcswait.c's policy driven with the prober's
 * calls (DNS, TCP, Health/Check), the head's rendezvous connection held, news sent to the parent
 * and a cancel taken from it. What to do next is always the policy's. */
#include "gcswait_loop.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "address.h"
#include "deadline.h"
#include "monotime.h"
#include "rdvauth.h"
#include "rdvmsg.h"

/* A connect to a live port answers in a round trip; past this the SYN was dropped. */
#define RDV_CONNECT_TIMEOUT_MS 1000

/* The rendezvous connection as the loop holds it. */
struct rdv_conn {
    int fd;
    bool connecting;
    long connect_deadline_ms;
    size_t len;
    char buf[RDVAUTH_READ_MAX + 1]; /* either version's message */
    const struct hmac_sha256_key *key;
    uint8_t wait_nonce[RDVAUTH_NONCE_BYTES]; /* the parent's, for this wait */
    uint8_t nonce[RDVAUTH_NONCE_BYTES];      /* this connection's */
    uint64_t connects;
};

/* With a key: this connection's nonce (the wait's, its last 8 bytes XORed with the count of
 * connections, so no two connections of a wait say the same), and the hello that says it. */
static int greet(struct rdv_conn *c, struct errbuf *err)
{
    char hello[RDVAUTH_HELLO_BYTES];
    if (!c->key)
        return 0;
    memcpy(c->nonce, c->wait_nonce, sizeof(c->nonce));
    c->connects++;
    for (int i = 0; i < 8; i++)
        c->nonce[RDVAUTH_NONCE_BYTES - 1 - i] ^= (uint8_t)(c->connects >> (8 * i));
    rdvauth_hello(c->nonce, hello);
    /* A fresh socket's send buffer takes these few bytes at once. */
    if (send(c->fd, hello, sizeof(hello), MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)sizeof(hello))
        return errbuf_set(err, "cannot say the hello: %s", strerror(errno));
    return 0;
}

static void rdv_close(struct rdv_conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    c->connecting = false;
    c->len = 0;
}

/* Starts a non-blocking connect; -1 with why when it failed at once. */
static int rdv_connect(struct rdv_conn *c, const char *addr, int port, long now_ms, struct errbuf *err)
{
    struct sockaddr_storage ss;
    socklen_t len;
    if (address_sockaddr(addr, port, &ss, &len, err) < 0)
        return -1;
    rdv_close(c);
    c->fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->fd < 0)
        return errbuf_set(err, "socket: %s", strerror(errno));
    if (connect(c->fd, (struct sockaddr *)&ss, len) < 0 && errno != EINPROGRESS) {
        int e = errno;
        rdv_close(c);
        return errbuf_set(err, "%s", e == ECONNREFUSED ? GCSWAIT_CONNECTION_REFUSED : strerror(e));
    }
    c->connecting = true;
    c->connect_deadline_ms = now_ms + RDV_CONNECT_TIMEOUT_MS;
    return 0;
}

/* The connection is readable or writable: what that means for the wait. -1: nothing yet. */
static int rdv_event(struct rdv_conn *c, struct errbuf *err)
{
    ssize_t n;
    size_t used;
    if (c->connecting) {
        int sock_err = 0;
        socklen_t len = sizeof(sock_err);
        if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &sock_err, &len) < 0)
            sock_err = errno;
        if (sock_err) {
            errbuf_set(err, "%s", sock_err == ECONNREFUSED ? GCSWAIT_CONNECTION_REFUSED : strerror(sock_err));
            return GCSWAIT_RDV_LOST;
        }
        c->connecting = false;
        return greet(c, err) < 0 ? GCSWAIT_RDV_LOST : GCSWAIT_RDV_CONNECTED;
    }
    n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return -1;
    if (n <= 0) {
        errbuf_set(err, "%s", n == 0 ? "closed by the head without a word" : strerror(errno));
        return GCSWAIT_RDV_LOST;
    }
    c->len += (size_t)n;
    /* SERVING is all the wait needs (a FINISHED after it is the worker's watch's, init/rdvwatch.c);
     * with a key, only with the head's tag for this connection's nonce. */
    switch (c->key ? rdvauth_parse(c->key, c->nonce, "", c->buf, c->len, &used)
                   : rendezvous_parse(c->buf, c->len, &used)) {
    case RENDEZVOUS_SERVING:
        return GCSWAIT_RDV_MESSAGE;
    case RENDEZVOUS_INCOMPLETE:
        return -1;
    default:
        errbuf_set(err, "%s",
                   c->key ? "it sent something other than rayboot's rendezvous message with the head's tag "
                            "(not the head, not its token, or the head of another cluster)"
                          : "it sent something other than rayboot's rendezvous message");
        return GCSWAIT_RDV_LOST;
    }
}

/* Sends each piece of news; 1 when one was the wait's last, -1 when the parent is gone. */
static int tell(const struct gcswait_io *io, unsigned id, const struct gcswait_news *news)
{
    int last = 0;
    for (int i = 0; i < news->n; i++) {
        struct prober_reply reply;
        const struct gcswait_item *it = &news->item[i];
        memset(&reply, 0, sizeof(reply));
        reply.status = it->event == GCSWAIT_SERVING ? PROBER_OK : PROBER_FAILED;
        reply.wait.event = it->event;
        reply.wait.id = id;
        memcpy(reply.addr, it->addr, sizeof(reply.addr));
        memcpy(reply.reason, it->text, sizeof(reply.reason));
        if (send(io->parent_fd, &reply, sizeof(reply), MSG_NOSIGNAL) < 0)
            return -1;
        if (gcswait_final(it->event))
            last = 1;
    }
    return last;
}

static int tell_one(const struct gcswait_io *io, unsigned id, enum gcswait_event event, const char *text)
{
    struct gcswait_news news = {0};
    struct gcswait_item *it = gcswait_news_add(&news, event);
    if (it)
        snprintf(it->text, sizeof(it->text), "%s", text);
    return tell(io, id, &news);
}

/* One probe: a TCP connect first (cheap, and it says "refused" clearly), then Health/Check;
 * after the head's message, Health/Check alone. */
static void probe(struct gcswait *g, const struct gcswait_io *io, struct gcswait_news *news)
{
    struct errbuf err;
    const char *stage = GCSWAIT_STAGE_TCP;
    long budget = deadline_left_ms(g->deadline_ms, monotime_ms());
    int rc = 0;
    err.msg[0] = '\0';
    if (g->rdv != GCSWAIT_RDV_WOKEN)
        rc = io->tcp(io->ctx, g->addr, g->port, budget, &err);
    if (rc == 0) {
        stage = "Health/Check";
        rc = io->health(io->ctx, g->addr, g->port, deadline_left_ms(g->deadline_ms, monotime_ms()), &err);
    }
    gcswait_probed(g, monotime_ms(), rc == 0, stage, err.msg, news);
}

/* Waits up to sleep_ms for the parent or the rendezvous. Returns 1 when the parent sent a request
 * (in *next), -1 when it is gone, 0 otherwise (news may hold what the rendezvous did). */
static int sleep_on(struct gcswait *g, struct rdv_conn *c, const struct gcswait_io *io, long sleep_ms,
                    struct prober_request *next, struct gcswait_news *news)
{
    struct pollfd pfd[2] = {{io->parent_fd, POLLIN, 0}, {c->fd, (short)(c->connecting ? POLLOUT : POLLIN), 0}};
    struct errbuf err;
    long now = monotime_ms();
    int rc;
    if (c->connecting)
        sleep_ms = c->connect_deadline_ms - now < sleep_ms ? c->connect_deadline_ms - now : sleep_ms;
    rc = poll(pfd, c->fd >= 0 ? 2 : 1, (int)(sleep_ms > 0 ? sleep_ms : 0));
    news->n = 0;
    if (rc < 0)
        return 0; /* EINTR */
    if (pfd[0].revents) {
        ssize_t n = recv(io->parent_fd, next, sizeof(*next), 0);
        if (n == 0 || (n < 0 && errno != EINTR))
            return -1;
        return n == (ssize_t)sizeof(*next) ? 1 : 0;
    }
    now = monotime_ms();
    if (c->fd >= 0 && pfd[1].revents) {
        int r = rdv_event(c, &err);
        if (r >= 0) {
            if (r == GCSWAIT_RDV_LOST)
                rdv_close(c);
            gcswait_rendezvous(g, now, (enum gcswait_rdv_result)r, err.msg, news);
        }
    } else if (c->connecting && now >= c->connect_deadline_ms) {
        rdv_close(c);
        gcswait_rendezvous(g, now, GCSWAIT_RDV_LOST, "timeout (no answer to the connect)", news);
    }
    return 0;
}

/* One step of the loop: 0 to go on, 1 when the parent sent a request (in *next), -1 when the
 * parent is gone. */
static int step(struct gcswait *g, struct rdv_conn *c, const struct gcswait_io *io, struct prober_request *next,
                struct gcswait_news *news)
{
    struct errbuf err;
    char addr[DNS_ADDR_MAX_BYTES];
    long sleep_ms, now = monotime_ms();
    int rc = 0;
    err.msg[0] = '\0';
    news->n = 0;
    switch (gcswait_next(g, now, &sleep_ms)) {
    case GCSWAIT_DO_GIVE_UP:
        gcswait_give_up(g, now, news);
        break;
    case GCSWAIT_DO_RESOLVE:
        rc = io->resolve(io->ctx, g->name, deadline_left_ms(g->deadline_ms, now), addr, &err);
        gcswait_resolved(g, monotime_ms(), rc == 0 ? addr : NULL, err.msg, news);
        break;
    case GCSWAIT_DO_CONNECT:
        if (rdv_connect(c, g->addr, g->rdv_port, now, &err) < 0)
            gcswait_rendezvous(g, now, GCSWAIT_RDV_LOST, err.msg, news);
        else
            g->rdv = GCSWAIT_RDV_CONNECTING;
        break;
    case GCSWAIT_DO_PROBE:
        probe(g, io, news);
        break;
    case GCSWAIT_DO_SLEEP:
        return sleep_on(g, c, io, sleep_ms, next, news);
    }
    return 0;
}

int gcswait_run(const struct prober_request *req, const struct gcswait_io *io, struct prober_request *next)
{
    struct gcswait g;
    struct gcswait_news news;
    struct rdv_conn c = {.fd = -1, .key = io->rdv_key};
    unsigned id = req->wait.id;
    int rc;

    if (!req->name[0] || req->port <= 0 || req->port > 65535 || req->wait.rendezvous_port < 0 ||
        req->wait.rendezvous_port > 65535 || req->budget_ms <= 0)
        return tell_one(io, id, GCSWAIT_REFUSED, "a wait needs a name, a port (1-65535) and a deadline") < 0 ? -1 : 0;
    gcswait_init(&g, req->name, req->port, req->wait.rendezvous_port, monotime_ms(), req->budget_ms, req->wait.seed);
    gcswait_poll_interval(&g, req->wait.poll_min_ms, req->wait.poll_max_ms);
    memcpy(c.wait_nonce, req->wait.nonce, sizeof(c.wait_nonce));
    /* Without Ray's token nothing tells the head's SERVING from a stranger's: its GCS confirms it. */
    gcswait_confirm(&g, req->wait.confirm != 0 || !io->rdv_key);
    for (;;) {
        rc = step(&g, &c, io, next, &news);
        /* A connection the wait no longer holds is closed. */
        if (c.fd >= 0 && g.rdv != GCSWAIT_RDV_HELD && g.rdv != GCSWAIT_RDV_CONNECTING)
            rdv_close(&c);
        if (rc != 0) {
            rdv_close(&c);
            if (rc < 0)
                return -1;
            /* PROBE_CANCEL, or any request: this wait ends, the request (not a cancel) is served. */
            if (tell_one(io, id, GCSWAIT_CANCELLED, "cancelled") < 0)
                return -1;
            return next->op == PROBE_CANCEL ? 0 : 1;
        }
        rc = tell(io, id, &news);
        if (rc != 0) {
            rdv_close(&c);
            return rc < 0 ? -1 : 0;
        }
    }
}
