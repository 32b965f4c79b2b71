/* The wait for the head's GCS: its policy, a state machine on a clock handed in (gcswait_next and
 * the results of its actions), with no I/O. gcswait.h says the speeds and why; the loop that runs
 * it in the prober, with the network, is gcswait_loop.c. */
#include "gcswait.h"
#include "text.h"

#include <stdio.h>
#include <string.h>

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
/* Nobody at the head's address (the GCS and the rendezvous both refuse: its pod has an address
 * but no process listening yet, e.g. while its image is pulled): the GCS poll backs off from 50 ms
 * to 1 s instead of 25 looks a second for as long as that lasts. A head that answers on either
 * port, or a new address, brings the fast poll back. The cost: a head that never offers a
 * rendezvous (KubeRay's, the sidecar-only manifests') is seen SERVING up to 1 s later. */
#define IDLE_BACKOFF_BASE_MS 50
#define IDLE_BACKOFF_CAP_MS 1000
/* A progress line at the first failure, then this often: visible, not noisy. */
#define PROGRESS_INTERVAL_MS 5000

static long min_l(long a, long b)
{
    return a < b ? a : b;
}

struct gcswait_item *gcswait_news_add(struct gcswait_news *news, enum gcswait_event event)
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
    backoff_init(&g->idle_backoff, IDLE_BACKOFF_BASE_MS, IDLE_BACKOFF_CAP_MS, (seed ? seed : 1) * 40503u);
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
    text_format(g->last_failure, sizeof(g->last_failure), "%.20s: %.600s", stage, reason);
    if (now_ms < g->next_log_ms || !(it = gcswait_news_add(news, GCSWAIT_PROGRESS)))
        return;
    text_format(it->text, sizeof(it->text), "waiting for %s: %s (attempt %u, %.1f s, next try in %ld ms)", g->what,
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
        if (g->addr[0] && (it = gcswait_news_add(news, GCSWAIT_UNRESOLVED)))
            snprintf(it->text, sizeof(it->text), "%.900s", reason);
        g->addr[0] = '\0';
        seek_rendezvous(g);
        failed(g, now_ms, "DNS", reason, delay, news);
        return;
    }
    backoff_reset(&g->dns_backoff);
    if (strcmp(g->addr, addr) != 0) {
        if ((it = gcswait_news_add(news, GCSWAIT_RESOLVED))) {
            snprintf(it->addr, sizeof(it->addr), "%s", addr);
            snprintf(it->text, sizeof(it->text), "%s", g->addr); /* the old one, or "" */
        }
        if (!g->addr[0] || g->rdv != GCSWAIT_RDV_WOKEN)
            seek_rendezvous(g);
        snprintf(g->addr, sizeof(g->addr), "%s", addr);
        g->next_probe_ms = now_ms;
        backoff_reset(&g->idle_backoff);
    }
    g->next_dns_ms = now_ms + (g->rdv == GCSWAIT_RDV_HELD ? SAFETY_MS : DNS_REFRESH_MS);
}

/* The wait's last news: addr is SERVING (by its Health/Check, or by the head's word). */
static void tell_serving(const struct gcswait *g, long now_ms, struct gcswait_news *news)
{
    struct gcswait_item *it = gcswait_news_add(news, GCSWAIT_SERVING);
    const char *how = "";
    if (!it)
        return;
    if (g->rdv == GCSWAIT_RDV_WOKEN)
        how = g->confirm ? "; woken by the head's rendezvous, confirmed" : "; woken by the head's rendezvous";
    snprintf(it->addr, sizeof(it->addr), "%s", g->addr);
    snprintf(it->text, sizeof(it->text), "%s is SERVING at %s after %.2f s (%u failed attempts%s)", g->what, g->addr,
             (double)(now_ms - g->start_ms) / 1000.0, g->attempt, how);
}

/* The GCS refused the connection and the rendezvous is not to be had either: no process of the
 * head listens on either port. */
static bool nobody_listening(const struct gcswait *g, const char *stage, const char *reason)
{
    return g->rdv == GCSWAIT_RDV_FALLBACK && strcmp(stage, GCSWAIT_STAGE_TCP) == 0 &&
           strcmp(reason, GCSWAIT_CONNECTION_REFUSED) == 0;
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
        /* The rendezvous said SERVING and the GCS does not (the head's GCS gone again, or a process
         * that took the head's port): poll it, as without a rendezvous. */
        struct gcswait_item *it = gcswait_news_add(news, GCSWAIT_RENDEZVOUS);
        if (it)
            snprintf(it->text, sizeof(it->text),
                     "the rendezvous at %s port %d said SERVING and the GCS does not (%.20s: %.300s): not taken; "
                     "polling the GCS",
                     g->addr, g->rdv_port, stage, reason);
        g->rdv = GCSWAIT_RDV_FALLBACK;
        g->next_rdv_ms = g->deadline_ms;
    }
    if (g->rdv == GCSWAIT_RDV_HELD) {
        delay = SAFETY_MS;
    } else if (nobody_listening(g, stage, reason)) {
        delay = backoff_next_ms(&g->idle_backoff);
    } else {
        backoff_reset(&g->idle_backoff);
        delay = backoff_jitter_ms(&g->poll_jitter, g->poll_min_ms, g->poll_max_ms);
    }
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
        if ((it = gcswait_news_add(news, GCSWAIT_RENDEZVOUS)))
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
        if ((it = gcswait_news_add(news, GCSWAIT_RENDEZVOUS)))
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
    if ((it = gcswait_news_add(news, GCSWAIT_DEADLINE)))
        text_format(it->text, sizeof(it->text), "gave up waiting for %s after %.1f s and %u attempts; last: %s",
                    g->what, (double)(now_ms - g->start_ms) / 1000.0, g->attempt,
                    g->last_failure[0] ? g->last_failure : "nothing tried");
}
