/* The wait for the head's GCS, inside the prober: the policy (gcswait_next and the results, on a
 * clock handed in) and its loop with the prober's calls (gcswait_run). gcswait.h says the speeds
 * and why. */
#include "gcswait.h"

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
#include "rdvmsg.h"

#define DNS_BACKOFF_BASE_MS 50
#define DNS_BACKOFF_CAP_MS 1000
#define GCS_POLL_MIN_MS 30
#define GCS_POLL_MAX_MS 50
/* While an address answers nothing, look its name up again this often: a restarted head comes
 * back with a new address. */
#define DNS_REFRESH_MS 1000
/* With the rendezvous held: the GCS probed, the name looked up, this often. A safety net for a
 * head whose message is lost; 0.4 connections a second. */
#define SAFETY_MS 5000
/* A rendezvous refused is asked again this often while polling: the head's rayboot may not have
 * been listening yet. */
#define RDV_RETRY_MS 2000
/* A connect to a live port answers in a round trip; past this the SYN was dropped. */
#define RDV_CONNECT_TIMEOUT_MS 1000
/* A progress line at the first failure, then this often: visible, not noisy. */
#define PROGRESS_INTERVAL_MS 5000

static long min_l(long a, long b)
{
    return a < b ? a : b;
}

static struct gcswait_item *add(struct gcswait_news *news, enum gcswait_event event)
{
    struct gcswait_item *it;
    if (news->n >= GCSWAIT_NEWS_MAX)
        return NULL;
    it = &news->item[news->n++];
    memset(it, 0, sizeof(*it));
    it->event = event;
    return it;
}

void gcswait_init(struct gcswait *g, const char *name, int port, int rdv_port, long now_ms, long timeout_ms,
                  uint64_t seed)
{
    memset(g, 0, sizeof(*g));
    snprintf(g->name, sizeof(g->name), "%s", name);
    snprintf(g->what, sizeof(g->what), "GCS %.253s:%d", name, port);
    g->port = port;
    g->rdv_port = rdv_port;
    g->start_ms = now_ms;
    g->deadline_ms = now_ms + timeout_ms;
    g->next_dns_ms = now_ms;
    g->next_log_ms = now_ms;
    g->rdv = rdv_port > 0 ? GCSWAIT_RDV_WANTED : GCSWAIT_RDV_OFF;
    backoff_init(&g->dns_backoff, DNS_BACKOFF_BASE_MS, DNS_BACKOFF_CAP_MS, seed ? seed : 1);
    backoff_init(&g->poll_jitter, GCS_POLL_MIN_MS, GCS_POLL_MAX_MS, (seed ? seed : 1) * 2654435761u);
    g->poll_min_ms = GCS_POLL_MIN_MS;
    g->poll_max_ms = GCS_POLL_MAX_MS;
}

void gcswait_poll_interval(struct gcswait *g, long min_ms, long max_ms)
{
    if (min_ms > 0 && max_ms >= min_ms) {
        g->poll_min_ms = min_ms;
        g->poll_max_ms = max_ms;
    }
}

void gcswait_confirm(struct gcswait *g, bool confirm)
{
    g->confirm = confirm;
}

enum gcswait_action gcswait_next(const struct gcswait *g, long now_ms, long *sleep_ms)
{
    long wake = g->next_dns_ms;
    *sleep_ms = 0;
    if (now_ms >= g->deadline_ms)
        return GCSWAIT_DO_GIVE_UP;
    /* The head's message: its confirmation first, before any lookup that happens to be due. */
    if (g->rdv == GCSWAIT_RDV_WOKEN && g->addr[0] && now_ms >= g->next_probe_ms)
        return GCSWAIT_DO_PROBE;
    if (now_ms >= g->next_dns_ms)
        return GCSWAIT_DO_RESOLVE;
    if (g->addr[0]) {
        if (g->rdv == GCSWAIT_RDV_WANTED || (g->rdv == GCSWAIT_RDV_FALLBACK && now_ms >= g->next_rdv_ms))
            return GCSWAIT_DO_CONNECT;
        if (now_ms >= g->next_probe_ms)
            return GCSWAIT_DO_PROBE;
        wake = min_l(wake, g->next_probe_ms);
        if (g->rdv == GCSWAIT_RDV_FALLBACK)
            wake = min_l(wake, g->next_rdv_ms);
    }
    *sleep_ms = min_l(wake, g->deadline_ms) - now_ms;
    return GCSWAIT_DO_SLEEP;
}

/* An attempt that the deadline cut short failed only because of the cut; the failure before it
 * says more about why the wait did not succeed, so it stays the last one. */
static bool cut_by_deadline(const struct gcswait *g, long now_ms)
{
    return g->attempt > 0 && now_ms >= g->deadline_ms;
}

static void failed(struct gcswait *g, long now_ms, const char *stage, const char *reason, long next_ms,
                   struct gcswait_news *news)
{
    struct gcswait_item *it;
    g->attempt++;
    snprintf(g->last_failure, sizeof(g->last_failure), "%.20s: %.600s", stage, reason);
    if (now_ms < g->next_log_ms || !(it = add(news, GCSWAIT_PROGRESS)))
        return;
    snprintf(it->text, sizeof(it->text), "waiting for %s: %s (attempt %u, %.1f s, next try in %ld ms)", g->what,
             g->last_failure, g->attempt, (double)(now_ms - g->start_ms) / 1000.0, next_ms);
    g->next_log_ms = now_ms + PROGRESS_INTERVAL_MS;
}

/* The address is gone or changed: a rendezvous held there is let go and sought again. */
static void seek_rendezvous(struct gcswait *g)
{
    if (g->rdv != GCSWAIT_RDV_OFF)
        g->rdv = GCSWAIT_RDV_WANTED;
}

void gcswait_resolved(struct gcswait *g, long now_ms, const char *addr, const char *reason, struct gcswait_news *news)
{
    struct gcswait_item *it;
    news->n = 0;
    if (!addr) {
        long delay;
        if (cut_by_deadline(g, now_ms))
            return;
        delay = backoff_next_ms(&g->dns_backoff);
        g->next_dns_ms = now_ms + delay;
        /* Even a DNS that only stopped answering withdraws the address: `ray start` gets the name
         * and resolves it itself, so a head found while DNS fails could not be joined anyway. */
        if (g->addr[0] && (it = add(news, GCSWAIT_UNRESOLVED)))
            snprintf(it->text, sizeof(it->text), "%.900s", reason);
        g->addr[0] = '\0';
        seek_rendezvous(g);
        failed(g, now_ms, "DNS", reason, delay, news);
        return;
    }
    backoff_reset(&g->dns_backoff);
    if (strcmp(g->addr, addr) != 0) {
        if ((it = add(news, GCSWAIT_RESOLVED))) {
            snprintf(it->addr, sizeof(it->addr), "%s", addr);
            snprintf(it->text, sizeof(it->text), "%s", g->addr); /* the old one, or "" */
        }
        if (!g->addr[0] || g->rdv != GCSWAIT_RDV_WOKEN)
            seek_rendezvous(g);
        snprintf(g->addr, sizeof(g->addr), "%s", addr);
        g->next_probe_ms = now_ms;
    }
    g->next_dns_ms = now_ms + (g->rdv == GCSWAIT_RDV_HELD ? SAFETY_MS : DNS_REFRESH_MS);
}

/* The wait's last news: addr is SERVING (by its Health/Check, or by the head's word). */
static void tell_serving(const struct gcswait *g, long now_ms, struct gcswait_news *news)
{
    struct gcswait_item *it = add(news, GCSWAIT_SERVING);
    const char *how = "";
    if (!it)
        return;
    if (g->rdv == GCSWAIT_RDV_WOKEN)
        how = g->confirm ? "; woken by the head's rendezvous, confirmed" : "; woken by the head's rendezvous";
    snprintf(it->addr, sizeof(it->addr), "%s", g->addr);
    snprintf(it->text, sizeof(it->text), "%s is SERVING at %s after %.2f s (%u failed attempts%s)", g->what, g->addr,
             (double)(now_ms - g->start_ms) / 1000.0, g->attempt, how);
}

void gcswait_probed(struct gcswait *g, long now_ms, bool serving, const char *stage, const char *reason,
                    struct gcswait_news *news)
{
    long delay;
    news->n = 0;
    if (serving) {
        tell_serving(g, now_ms, news);
        return;
    }
    if (cut_by_deadline(g, now_ms))
        return;
    if (g->rdv == GCSWAIT_RDV_WOKEN) {
        /* The head said SERVING and its GCS does not: poll it, as without a rendezvous. */
        g->rdv = GCSWAIT_RDV_FALLBACK;
        g->next_rdv_ms = g->deadline_ms;
    }
    delay = g->rdv == GCSWAIT_RDV_HELD ? SAFETY_MS : backoff_jitter_ms(&g->poll_jitter, g->poll_min_ms, g->poll_max_ms);
    g->next_probe_ms = now_ms + delay;
    failed(g, now_ms, stage, reason, delay, news);
}

void gcswait_rendezvous(struct gcswait *g, long now_ms, enum gcswait_rdv_result r, const char *reason,
                        struct gcswait_news *news)
{
    struct gcswait_item *it;
    news->n = 0;
    if (r == GCSWAIT_RDV_CONNECTED) {
        g->rdv = GCSWAIT_RDV_HELD;
        /* A head already serving writes at once; until it does, only the safety net probes. */
        g->next_probe_ms = now_ms + SAFETY_MS;
        g->next_dns_ms = now_ms + SAFETY_MS;
        if ((it = add(news, GCSWAIT_RENDEZVOUS)))
            snprintf(it->text, sizeof(it->text),
                     "holding the head's rendezvous at %s port %d; probing the GCS every %d s meanwhile", g->addr,
                     g->rdv_port, SAFETY_MS / 1000);
        return;
    }
    if (r == GCSWAIT_RDV_MESSAGE) {
        g->rdv = GCSWAIT_RDV_WOKEN;
        if (!g->confirm)
            tell_serving(g, now_ms, news); /* the head's Health/Check saw it: the wait is over */
        else
            g->next_probe_ms = now_ms; /* one Health/Check to confirm */
        return;
    }
    /* Lost: poll the GCS from now on, and try the rendezvous again later. Said once per address
     * or after a held one is lost, not at every retry. */
    if (g->rdv == GCSWAIT_RDV_HELD || g->rdv_told != 1) {
        if ((it = add(news, GCSWAIT_RENDEZVOUS)))
            snprintf(it->text, sizeof(it->text), "no rendezvous at %s port %d (%.200s): polling the GCS", g->addr,
                     g->rdv_port, reason);
        g->rdv_told = 1;
    }
    g->rdv = GCSWAIT_RDV_FALLBACK;
    g->next_rdv_ms = now_ms + RDV_RETRY_MS;
    g->next_probe_ms = min_l(g->next_probe_ms, now_ms);
}

void gcswait_give_up(struct gcswait *g, long now_ms, struct gcswait_news *news)
{
    struct gcswait_item *it;
    news->n = 0;
    if ((it = add(news, GCSWAIT_DEADLINE)))
        snprintf(it->text, sizeof(it->text), "gave up waiting for %s after %.1f s and %u attempts; last: %s", g->what,
                 (double)(now_ms - g->start_ms) / 1000.0, g->attempt,
                 g->last_failure[0] ? g->last_failure : "nothing tried");
}

/* ---- the loop, in the prober ------------------------------------------------------------------ */

/* The rendezvous connection as the loop holds it. */
struct rdv_conn {
    int fd;
    bool connecting;
    long connect_deadline_ms;
    size_t len;
    char buf[RENDEZVOUS_READ_MAX + 1];
};

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
        return errbuf_set(err, "%s", e == ECONNREFUSED ? "connection refused" : strerror(e));
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
            errbuf_set(err, "%s", sock_err == ECONNREFUSED ? "connection refused" : strerror(sock_err));
            return GCSWAIT_RDV_LOST;
        }
        c->connecting = false;
        return GCSWAIT_RDV_CONNECTED;
    }
    n = recv(c->fd, c->buf + c->len, RENDEZVOUS_READ_MAX + 1 - c->len, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return -1;
    if (n <= 0) {
        errbuf_set(err, "%s", n == 0 ? "closed by the head without a word" : strerror(errno));
        return GCSWAIT_RDV_LOST;
    }
    c->len += (size_t)n;
    /* SERVING is all the wait needs (a FINISHED after it is the worker's watch's, init/rdvwatch.c). */
    switch (rendezvous_parse(c->buf, c->len, &used)) {
    case RENDEZVOUS_SERVING:
        return GCSWAIT_RDV_MESSAGE;
    case RENDEZVOUS_INCOMPLETE:
        return -1;
    default:
        errbuf_set(err, "it sent something other than rayboot's rendezvous message");
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
    struct gcswait_item *it = add(&news, event);
    if (it)
        snprintf(it->text, sizeof(it->text), "%s", text);
    return tell(io, id, &news);
}

/* One probe: a TCP connect first (cheap, and it says "refused" clearly), then Health/Check;
 * after the head's message, Health/Check alone. */
static void probe(struct gcswait *g, const struct gcswait_io *io, struct gcswait_news *news)
{
    struct errbuf err;
    const char *stage = "TCP";
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
        sleep_ms = min_l(sleep_ms, c->connect_deadline_ms - now);
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

/* One step of the loop: 0 to go on, else run's return value (2: ended). */
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
    struct rdv_conn c = {.fd = -1};
    unsigned id = req->wait.id;
    int rc;

    if (!req->name[0] || req->port <= 0 || req->port > 65535 || req->wait.rendezvous_port < 0 ||
        req->wait.rendezvous_port > 65535 || req->budget_ms <= 0)
        return tell_one(io, id, GCSWAIT_REFUSED, "a wait needs a name, a port (1-65535) and a deadline") < 0 ? -1 : 0;
    gcswait_init(&g, req->name, req->port, req->wait.rendezvous_port, monotime_ms(), req->budget_ms, req->wait.seed);
    gcswait_poll_interval(&g, req->wait.poll_min_ms, req->wait.poll_max_ms);
    gcswait_confirm(&g, req->wait.confirm != 0);
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
