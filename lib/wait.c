/* Wait loops. Two speeds: while the head's name does not resolve, DNS is asked with exponential
 * backoff and full jitter (50 ms doubling to 1 s), which keeps CoreDNS safe when thousands of
 * workers start at once (about 2 queries/s each at steady state). Once an address is known, the
 * GCS is polled every 30-50 ms (about 25 attempts/s) with a cheap TCP connect, so a worker starts
 * within tens of milliseconds of the head; the name is re-resolved at most once a second, since
 * a restarted head comes back with a new address. */
#include "wait.h"

#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "backoff.h"
#include "deadline.h"
#include "gcs.h"
#include "log.h"
#include "monotime.h"

#define DNS_BACKOFF_BASE_MS 50
#define DNS_BACKOFF_CAP_MS 1000
#define GCS_POLL_MIN_MS 30
#define GCS_POLL_MAX_MS 50
/* While an address answers nothing, look its name up again this often. */
#define DNS_REFRESH_MS 1000
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

/* An attempt that the deadline cut short failed with "timeout" only because of the cut; the
 * failure before it says more about why the wait did not succeed, so it stays the last one. */
static bool cut_by_deadline(const struct progress *pr, long deadline)
{
    return pr->attempt > 0 && monotime_ms() >= deadline;
}

/* One prober request; its budget is what is left of the wait's deadline. PROBER_DIED ends the
 * wait (err says how). */
static enum prober_status ask(struct prober *p, struct prober_request req, long deadline, struct prober_reply *reply,
                              struct errbuf *err)
{
    req.budget_ms = deadline_left_ms(deadline, monotime_ms());
    return prober_ask(p, &req, reply, err);
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
 * version understands (a GCS replaced later is asked again). */
static enum prober_status learn_ray_version(struct prober *p, const char *addr, int port, long deadline,
                                            struct errbuf *err)
{
    struct prober_reply reply;
    enum prober_status st = ask(p, prober_req_ray_version(addr, port, 0), deadline, &reply, err);
    if (st != PROBER_DIED)
        wait_report_ray_version(addr, st, &reply);
    return st;
}

enum wait_result wait_for_gcs(struct prober *p, const struct wait_gcs *w, char addr[DNS_ADDR_MAX_BYTES],
                              struct errbuf *err)
{
    struct progress pr = {0};
    struct backoff dns_backoff, poll_jitter;
    struct prober_reply reply;
    enum prober_status st;
    char what[300];
    long deadline, resolved_at = 0;

    snprintf(what, sizeof(what), "GCS %s:%d", w->name, w->port);
    pr.what = what;
    pr.start_ms = monotime_ms();
    pr.next_log_ms = pr.start_ms;
    deadline = pr.start_ms + w->timeout_ms;
    backoff_init(&dns_backoff, DNS_BACKOFF_BASE_MS, DNS_BACKOFF_CAP_MS, 0);
    backoff_init(&poll_jitter, GCS_POLL_MIN_MS, GCS_POLL_MAX_MS, 0);
    addr[0] = '\0';

    for (;;) {
        long delay;
        const char *stage;
        if (monotime_ms() >= deadline) {
            errbuf_set(err, "gave up waiting for %s after %.1f s and %u attempts; last: %s", what,
                       (double)(monotime_ms() - pr.start_ms) / 1000.0, pr.attempt,
                       pr.last_failure[0] ? pr.last_failure : "nothing tried");
            return WAIT_DEADLINE;
        }
        if (!addr[0] || monotime_ms() - resolved_at >= DNS_REFRESH_MS) {
            st = ask(p, prober_req_resolve(w->name, 0), deadline, &reply, err);
            if (st == PROBER_DIED)
                return WAIT_PROBER_DIED;
            if (st != PROBER_OK) {
                if (cut_by_deadline(&pr, deadline))
                    continue;
                delay = backoff_next_ms(&dns_backoff);
                progress_fail(&pr, "DNS", reply.reason, delay);
                /* Even a DNS that only stopped answering withdraws the address: `ray start` gets
                 * the name and resolves it itself, so a head found while DNS fails could not be
                 * joined anyway. */
                addr[0] = '\0';
                if (wait_sleep(delay, w->stop) < 0)
                    return WAIT_STOPPED;
                continue;
            }
            if (addr[0] && strcmp(addr, reply.addr) != 0)
                log_info("%s now resolves to %s (was %s)", w->name, reply.addr, addr);
            backoff_reset(&dns_backoff);
            memcpy(addr, reply.addr, DNS_ADDR_MAX_BYTES);
            resolved_at = monotime_ms();
        }
        stage = "TCP";
        st = ask(p, prober_req_tcp(addr, w->port, 0), deadline, &reply, err);
        if (st == PROBER_OK) {
            stage = "Health/Check";
            st = ask(p, prober_req_health(addr, w->port, 0), deadline, &reply, err);
            if (st == PROBER_OK) {
                log_info("%s is SERVING at %s after %.2f s (%u failed attempts)", what, addr,
                         (double)(monotime_ms() - pr.start_ms) / 1000.0, pr.attempt);
                return learn_ray_version(p, addr, w->port, deadline, err) == PROBER_DIED ? WAIT_PROBER_DIED
                                                                                         : WAIT_READY;
            }
        }
        if (st == PROBER_DIED)
            return WAIT_PROBER_DIED;
        if (cut_by_deadline(&pr, deadline))
            continue;
        delay = backoff_jitter_ms(&poll_jitter, GCS_POLL_MIN_MS, GCS_POLL_MAX_MS);
        progress_fail(&pr, stage, reply.reason, delay);
        if (wait_sleep(delay, w->stop) < 0)
            return WAIT_STOPPED;
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
