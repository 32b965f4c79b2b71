/* Wait loops. The wait for the head's GCS runs in the prober (lib/ray/gcswait.c, which says its
 * speeds): rayboot sends it one request and wakes only on its news (an address found or lost, a
 * progress line, the rendezvous held or not, the end), or on a signal. The wait for the workers
 * asks the GCS's node list every 250 ms. */
#include "wait.h"

#include <poll.h>
#include <sys/random.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "deadline.h"
#include "gcs.h"
#include "gcswait.h"
#include "log.h"
#include "monotime.h"

/* A progress line at the first failure, then this often: visible, not noisy. */
#define WAIT_PROGRESS_INTERVAL_MS 5000
/* The node list is asked for less eagerly: it is a bigger reply on a busy GCS. */
#define WORKERS_POLL_MS 250

int wait_sleep(long ms, const struct wait_stop *stop)
{
    struct pollfd pfd = {stop ? stop->fd : -1, POLLIN, 0};
    long end = monotime_ms() + ms;
    for (;;) {
        long left = end - monotime_ms();
        if (poll(&pfd, pfd.fd >= 0 ? 1 : 0, left > 0 ? (int)left : 0) > 0) {
            if (stop && stop->check(stop->ctx))
                return -1;
            continue; /* read and not a reason to stop: sleep what is left */
        }
        if (monotime_ms() >= end)
            return 0;
    }
}

/* What the loop knows, for progress lines and the final message. */
struct progress {
    const char *what; /* "GCS head:6379" */
    long start_ms;
    long next_log_ms;
    unsigned attempt;
    char last_failure[ERRBUF_MAX_BYTES];
};

static void progress_fail(struct progress *pr, const char *stage, const char *reason, long next_ms)
{
    long now = monotime_ms();
    pr->attempt++;
    snprintf(pr->last_failure, sizeof(pr->last_failure), "%s: %s", stage, reason);
    if (now >= pr->next_log_ms) {
        log_info("waiting for %s: %s (attempt %u, %.1f s, next try in %ld ms)", pr->what, pr->last_failure, pr->attempt,
                 (double)(now - pr->start_ms) / 1000.0, next_ms);
        pr->next_log_ms = now + WAIT_PROGRESS_INTERVAL_MS;
    }
}

/* One prober request; its budget is what is left of the wait's deadline. PROBER_DIED ends the
 * wait (err says how). */
static enum prober_status ask(struct prober *p, struct prober_request req, long deadline, struct prober_reply *reply,
                              struct errbuf *err)
{
    req.budget_ms = deadline_left_ms(deadline, monotime_ms());
    return prober_ask(p, &req, reply, err);
}

/* The wait's id, echoed in its news: a cancelled wait's late news are not the next one's. */
static unsigned last_wait_id;

/* The prober's news, one at a time, handled; a result when the wait ended, 1 to go on. */
static int on_news(const struct wait_gcs *w, const struct prober_reply *reply, char addr[DNS_ADDR_MAX_BYTES],
                   struct errbuf *err)
{
    switch (reply->wait.event) {
    case GCSWAIT_RESOLVED:
        if (reply->reason[0])
            log_info("%s now resolves to %s (was %s)", w->name, reply->addr, reply->reason);
        memcpy(addr, reply->addr, DNS_ADDR_MAX_BYTES);
        return 1;
    case GCSWAIT_UNRESOLVED:
        addr[0] = '\0';
        return 1;
    case GCSWAIT_PROGRESS:
    case GCSWAIT_RENDEZVOUS:
        log_info("%s", reply->reason);
        return 1;
    case GCSWAIT_SERVING:
        memcpy(addr, reply->addr, DNS_ADDR_MAX_BYTES);
        log_info("%s", reply->reason);
        return WAIT_READY;
    case GCSWAIT_CANCELLED:
        errbuf_set(err, "the wait for GCS %s:%d was cancelled", w->name, w->port);
        return WAIT_STOPPED;
    default: /* GCSWAIT_DEADLINE, GCSWAIT_REFUSED */
        errbuf_set(err, "%s", reply->reason);
        return WAIT_DEADLINE;
    }
}

void wait_report_ray_version(const char *addr, enum prober_status st, const struct prober_reply *reply)
{
    if (st != PROBER_OK) {
        log_warn("could not read the Ray version of the GCS at %s (%s); taking it for Ray 2.49 or later", addr,
                 reply ? reply->reason : "the prober failed");
        return;
    }
    switch (gcs_nodes_form_for(reply->value)) {
    case GCS_NODES_SELECTORS:
        log_info("the GCS at %s runs Ray %s", addr, reply->value);
        break;
    case GCS_NODES_FILTERS:
        log_info("the GCS at %s runs Ray %s (node lookups in the 2.36-2.48 request form)", addr, reply->value);
        break;
    case GCS_NODES_UNFILTERED:
        log_warn("the GCS at %s runs Ray %s, older than 2.36: every node lookup pulls the whole node table "
                 "(a cost that grows with the cluster); Ray 2.49 or later is supported best",
                 addr, reply->value);
        break;
    }
}

/* Once a GCS answers: its Ray version, logged, and the prober then asks for nodes in the form that
 * version understands (a GCS replaced later is asked again). The same call takes this pod's
 * token, so a wrong one is told at once rather than after the deadline. Bounded by the prober's
 * own limits (a reply within PROBER_TIMEOUT_MS). */
enum wait_result wait_read_ray_version(struct prober *p, const char *addr, int port, struct errbuf *err)
{
    struct prober_reply reply;
    struct prober_request req = prober_req_ray_version(addr, port, 0);
    enum prober_status st = prober_ask(p, &req, &reply, err);
    if (st == PROBER_DIED)
        return WAIT_PROBER_DIED;
    if (st == PROBER_UNAUTHENTICATED) {
        errbuf_set(err, "%s", reply.reason);
        return WAIT_UNAUTHENTICATED;
    }
    wait_report_ray_version(addr, st, &reply);
    return WAIT_READY;
}

enum wait_result wait_for_gcs(struct prober *p, const struct wait_gcs *w, char addr[DNS_ADDR_MAX_BYTES],
                              struct errbuf *err)
{
    unsigned id = ++last_wait_id;
    uint64_t seed = ((uint64_t)monotime_ms() << 20) ^ ((uint64_t)getpid() << 40) ^ id;
    struct prober_request req =
        prober_req_wait_gcs(w->name, w->port, w->rendezvous_port, w->timeout_ms > 0 ? w->timeout_ms : 1, id, seed);
    req.wait.poll_min_ms = w->poll_min_ms;
    req.wait.poll_max_ms = w->poll_max_ms;
    req.wait.confirm = w->confirm ? 1 : 0;
    snprintf(req.text, sizeof(req.text), "%s", w->cluster_name ? w->cluster_name : "");
    /* No randomness, no rendezvous: a nonce that can be guessed would let an answer be replayed. */
    if (req.wait.rendezvous_port > 0 &&
        getrandom(req.wait.nonce, sizeof(req.wait.nonce), 0) != (ssize_t)sizeof(req.wait.nonce))
        req.wait.rendezvous_port = 0;
    long deadline = monotime_ms() + w->timeout_ms;
    /* The prober owns the deadline; past it and a request's limit, it is stuck. */
    long hard_deadline = deadline + PROBER_TIMEOUT_MS;

    addr[0] = '\0';
    if (prober_send(p, &req, err) < 0)
        return WAIT_PROBER_DIED;
    for (;;) {
        struct pollfd pfd[2] = {{p->fd, POLLIN, 0}, {w->stop ? w->stop->fd : -1, POLLIN, 0}};
        struct prober_reply reply;
        enum prober_status st;
        long left = hard_deadline - monotime_ms();
        int rc;
        if (left <= 0) {
            prober_abort(p);
            errbuf_set(err, "the prober did not end its wait for GCS %s:%d in time and was killed", w->name, w->port);
            return WAIT_PROBER_DIED;
        }
        if (poll(pfd, pfd[1].fd >= 0 ? 2 : 1, (int)left) <= 0)
            continue; /* EINTR, or the time is up: looked at above */
        if (w->stop && pfd[1].revents && w->stop->check(w->stop->ctx)) {
            /* Told, not waited for: its last news are skipped by whoever asks next (prober_ask). */
            struct prober_request cancel = prober_req_cancel();
            (void)prober_send(p, &cancel, err);
            return WAIT_STOPPED;
        }
        if (!pfd[0].revents)
            continue;
        st = prober_receive(p, &reply, err);
        if (st == PROBER_PENDING)
            continue;
        if (st == PROBER_DIED)
            return WAIT_PROBER_DIED;
        if (reply.wait.event == 0 || reply.wait.id != id)
            continue; /* an earlier wait's late news */
        rc = on_news(w, &reply, addr, err);
        if (rc != 1)
            return (enum wait_result)rc;
    }
}

enum wait_result wait_for_workers(struct prober *p, const char *addr, int port, long expected, long timeout_ms,
                                  const struct wait_stop *stop, long *joined, struct errbuf *err)
{
    struct progress pr = {0};
    struct prober_reply reply;
    enum prober_status st;
    char what[128];
    long deadline;

    snprintf(what, sizeof(what), "%ld workers to join", expected);
    pr.what = what;
    pr.start_ms = monotime_ms();
    pr.next_log_ms = pr.start_ms + WAIT_PROGRESS_INTERVAL_MS; /* a slow join is normal at first */
    deadline = pr.start_ms + timeout_ms;
    *joined = 0;
    for (;;) {
        st = ask(p, prober_req_nodes(addr, port, 0), deadline, &reply, err);
        if (st == PROBER_DIED)
            return WAIT_PROBER_DIED;
        if (st == PROBER_UNAUTHENTICATED) {
            errbuf_set(err, "%s", reply.reason);
            return WAIT_UNAUTHENTICATED;
        }
        if (st == PROBER_OK) {
            *joined = reply.alive_workers;
            if (*joined >= expected) {
                log_info("%ld of %ld workers joined after %.2f s", *joined, expected,
                         (double)(monotime_ms() - pr.start_ms) / 1000.0);
                return WAIT_READY;
            }
        }
        if (monotime_ms() >= deadline) {
            errbuf_set(err, "only %ld of %ld workers joined within %.0f s; going on", *joined, expected,
                       (double)timeout_ms / 1000.0);
            return WAIT_DEADLINE;
        }
        if (st == PROBER_OK) {
            char status[64];
            snprintf(status, sizeof(status), "%ld joined", *joined);
            progress_fail(&pr, "workers", status, WORKERS_POLL_MS);
        } else {
            progress_fail(&pr, "GetAllNodeInfo", reply.reason, WORKERS_POLL_MS);
        }
        if (wait_sleep(WORKERS_POLL_MS, stop) < 0)
            return WAIT_STOPPED;
    }
}
