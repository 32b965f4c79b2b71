/* The wait for the head's GCS, run inside the prober: it resolves the head's name,
 * holds the head's rendezvous when there is one, probes Health/Check, and tells rayboot only what
 * changed. The policy is a state machine on a clock handed in (gcswait_next and the gcswait_*
 * results), so tests drive it without a network; gcswait_run (gcswait_loop.h) is its loop with the
 * prober's calls.
 *
 * The speeds: while the name does not resolve, only DNS is asked, with exponential backoff and
 * jitter in each step's upper half (50 ms doubling to 1 s: ~1.3 queries/s, safe for CoreDNS when
 * a thousand workers start at once). Once an address is known and the rendezvous is held, the GCS
 * is probed every 5 s as a safety net and the name looked up again as often; the head's message
 * is SERVING, told at once when it carries the head's tag (Ray's token, rdvauth.h): the head writes
 * it only after its own Health/Check saw SERVING, so a second one here would only delay the join.
 * Without a token nothing tells the head's word from that of a process on its port, so it is
 * confirmed with one Health/Check first, as is any wait that asks for it (gcswait_confirm: a worker
 * rejoining after its Ray ended, when a head that lies would start Ray again and again). Without a
 * rendezvous (refused, reset, timeout: an older head, a head rayboot does not run, a NetworkPolicy)
 * the GCS is polled every 30-50 ms with a cheap TCP connect, the name re-resolved once a second,
 * and the rendezvous tried again every 2 s; while both ports refuse (nothing listens at the head's
 * address yet) the poll backs off to once a second. */
#ifndef RAYBOOT_GCSWAIT_H
#define RAYBOOT_GCSWAIT_H

#include <stdbool.h>
#include <stdint.h>

#include "backoff.h"
#include "dns.h"
#include "errbuf.h"
#include "prober_req.h"

/* The probe stage and the reason a refused TCP connect is reported with (gcswait_probed): nobody
 * listens there, which the policy treats apart (it backs off). */
#define GCSWAIT_STAGE_TCP "TCP"
#define GCSWAIT_CONNECTION_REFUSED "connection refused"

/* What the prober tells rayboot during a wait (prober_reply.wait.event). */
enum gcswait_event {
    GCSWAIT_NONE = 0,
    GCSWAIT_RESOLVED,   /* addr: the name resolves (first, or to a new address: reason says the old one) */
    GCSWAIT_UNRESOLVED, /* the name stopped resolving; reason: why */
    GCSWAIT_PROGRESS,   /* reason: a progress line (the first failure, then every 5 s) */
    GCSWAIT_RENDEZVOUS, /* reason: the rendezvous is held, or why not (a line to log) */
    /* The last news of a wait: */
    GCSWAIT_SERVING,   /* addr answered Health/Check SERVING; reason: how long it took */
    GCSWAIT_DEADLINE,  /* reason: after how long, how many attempts, the last failure */
    GCSWAIT_CANCELLED, /* PROBE_CANCEL (or another request) ended it */
    GCSWAIT_REFUSED,   /* the request was not one the prober can wait on; reason: why */
};

static inline bool gcswait_final(int event)
{
    return event >= GCSWAIT_SERVING;
}

enum gcswait_action {
    GCSWAIT_DO_RESOLVE,
    GCSWAIT_DO_CONNECT, /* open a connection to the rendezvous */
    GCSWAIT_DO_PROBE,   /* TCP connect then Health/Check (Health/Check alone after the head's message) */
    GCSWAIT_DO_SLEEP,   /* nothing due: wait (for the rendezvous, the parent) up to *sleep_ms */
    GCSWAIT_DO_GIVE_UP, /* the deadline passed: gcswait_give_up */
};

enum gcswait_rdv {
    GCSWAIT_RDV_OFF,        /* no rendezvous port */
    GCSWAIT_RDV_WANTED,     /* to connect (the address is known) */
    GCSWAIT_RDV_CONNECTING, /* the connect is under way (gcswait_run sets it) */
    GCSWAIT_RDV_HELD,       /* connected: waiting for the message */
    GCSWAIT_RDV_FALLBACK,   /* none to be had: polling, tried again at next_rdv_ms */
    GCSWAIT_RDV_WOKEN,      /* the message came (and, when confirming, the Health/Check is due) */
};

/* What the rendezvous connection did (gcswait_rendezvous). */
enum gcswait_rdv_result {
    GCSWAIT_RDV_CONNECTED,
    GCSWAIT_RDV_LOST, /* refused, reset, timed out, closed, or bytes that are not the message */
    GCSWAIT_RDV_MESSAGE,
};

#define GCSWAIT_NEWS_MAX 2

/* The news one step produced, in order (n may be 0). */
struct gcswait_news {
    int n;
    struct gcswait_item {
        enum gcswait_event event;
        char addr[DNS_ADDR_MAX_BYTES];
        char text[ERRBUF_MAX_BYTES];
    } item[GCSWAIT_NEWS_MAX];
};

/* The next item of news, zeroed but for its event; NULL when news is full. */
struct gcswait_item *gcswait_news_add(struct gcswait_news *news, enum gcswait_event event);

struct gcswait {
    char name[DNS_NAME_MAX_BYTES + 2];
    char what[DNS_NAME_MAX_BYTES + 32]; /* "GCS head:6379", for the lines */
    int port, rdv_port;
    long start_ms, deadline_ms;
    char addr[DNS_ADDR_MAX_BYTES]; /* "" while the name does not resolve */
    long next_dns_ms, next_probe_ms, next_rdv_ms, next_log_ms;
    enum gcswait_rdv rdv;
    int rdv_told; /* the fallback was said (once, not at every retry) */
    unsigned attempt;
    char last_failure[640];
    struct backoff dns_backoff, poll_jitter, idle_backoff;
    long poll_min_ms, poll_max_ms;
    bool confirm; /* the head's message is confirmed by a Health/Check (gcswait_confirm) */
};

void gcswait_init(struct gcswait *g, const char *name, int port, int rdv_port, long now_ms, long timeout_ms,
                  uint64_t seed);
/* The GCS poll's interval without a rendezvous (the default: 30-50 ms). The head polls its own GCS
 * on loopback faster: its workers learn SERVING from it. */
void gcswait_poll_interval(struct gcswait *g, long min_ms, long max_ms);
/* confirm: the head's message brings one Health/Check, and SERVING only when it says so (the
 * default, false: the message is SERVING). */
void gcswait_confirm(struct gcswait *g, bool confirm);
/* What to do now; for GCSWAIT_DO_SLEEP, how long at most. */
enum gcswait_action gcswait_next(const struct gcswait *g, long now_ms, long *sleep_ms);
/* The results of the actions. addr NULL: the lookup failed for reason. */
void gcswait_resolved(struct gcswait *g, long now_ms, const char *addr, const char *reason, struct gcswait_news *news);
/* serving false: stage ("TCP", "Health/Check") failed for reason. */
void gcswait_probed(struct gcswait *g, long now_ms, bool serving, const char *stage, const char *reason,
                    struct gcswait_news *news);
void gcswait_rendezvous(struct gcswait *g, long now_ms, enum gcswait_rdv_result r, const char *reason,
                        struct gcswait_news *news);
void gcswait_give_up(struct gcswait *g, long now_ms, struct gcswait_news *news);

#endif
