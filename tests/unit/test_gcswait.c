/* Unit tests for lib/ray/gcswait.c's policy on a simulated clock (no network, no sleeping), and for
 * lib/ray/rdvmsg.c's parser: while the name does not resolve only DNS is asked; with the rendezvous
 * held the GCS is probed every 5 s and the name looked up as often; the head's message is SERVING
 * at once (with confirm, it brings one probe first); a lost rendezvous falls back to polling at
 * 30-50 ms and is tried again every 2 s, backing off to 1 s while nothing listens at the head;
 * news come only on a change (and a progress line every 5 s). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "gcswait.h"
#include "rdvmsg.h"

/* What the simulated waits did. */
struct tally {
    int resolves, connects, probes, progress, other_news;
    const char *probe_stage, *probe_reason; /* how each probe fails; NULL: TCP, connection refused */
};

static void count_news(const struct gcswait_news *news, struct tally *t)
{
    for (int i = 0; i < news->n; i++) {
        if (news->item[i].event == GCSWAIT_PROGRESS)
            t->progress++;
        else
            t->other_news++;
    }
}

/* Runs the policy from now to until: DNS answers addr (NULL: fails), the rendezvous answers
 * rdv_result to a connect, the GCS is not SERVING. Returns the time reached. */
static long simulate(struct gcswait *g, long now, long until, const char *addr, int rdv_result, struct tally *t)
{
    struct gcswait_news news;
    while (now < until) {
        long sleep_ms;
        news.n = 0;
        switch (gcswait_next(g, now, &sleep_ms)) {
        case GCSWAIT_DO_RESOLVE:
            t->resolves++;
            gcswait_resolved(g, now, addr, "NXDOMAIN", &news);
            break;
        case GCSWAIT_DO_CONNECT:
            t->connects++;
            g->rdv = GCSWAIT_RDV_CONNECTING; /* as gcswait_run does */
            gcswait_rendezvous(g, now, (enum gcswait_rdv_result)rdv_result, "connection refused", &news);
            break;
        case GCSWAIT_DO_PROBE:
            t->probes++;
            gcswait_probed(g, now, false, t->probe_stage ? t->probe_stage : GCSWAIT_STAGE_TCP,
                           t->probe_reason ? t->probe_reason : GCSWAIT_CONNECTION_REFUSED, &news);
            break;
        case GCSWAIT_DO_SLEEP:
            assert_true(sleep_ms >= 0);
            now += sleep_ms > 0 ? sleep_ms : 1;
            break;
        case GCSWAIT_DO_GIVE_UP:
            return now;
        }
        count_news(&news, t);
    }
    return now;
}

/* A name that does not resolve: only DNS, about 1.3 queries a second (backoff to 1 s, each delay in
 * the upper half of its step: 500-1000 ms at the cap),
 * one progress line per 5 s, and nothing else told. */
static void test_unresolved_asks_only_dns(void **state)
{
    struct gcswait g;
    struct tally t = {0};
    (void)state;
    gcswait_init(&g, "head.ns.svc", 6379, 8079, 0, 60000, 42);
    simulate(&g, 0, 20000, NULL, GCSWAIT_RDV_CONNECTED, &t);
    assert_int_equal(t.connects, 0);
    assert_int_equal(t.probes, 0);
    /* 1 at once, 5 in the ~1 s ramp, then a mean of 750 ms: ~27 (delays in [0, step] made ~40). */
    assert_true(t.resolves >= 22 && t.resolves <= 33);
    assert_int_equal(t.progress, 4); /* at 0, 5, 10, 15 s */
    assert_int_equal(t.other_news, 0);
}

/* The rendezvous held: one connect, the GCS probed every 5 s, DNS every 5 s; then the head's
 * message is SERVING at once, with no probe of ours (the head's own Health/Check saw it). */
static void test_held_rendezvous_barely_polls(void **state)
{
    struct gcswait g;
    struct gcswait_news news;
    struct tally t = {0};
    long now;
    (void)state;
    gcswait_init(&g, "head.ns.svc", 6379, 8079, 0, 600000, 42);
    now = simulate(&g, 0, 60000, "10.0.0.9", GCSWAIT_RDV_CONNECTED, &t);
    assert_int_equal(t.connects, 1);
    assert_int_equal(g.rdv, GCSWAIT_RDV_HELD);
    /* The first probe right after the address (before the connect), then one per 5 s. */
    assert_true(t.probes >= 11 && t.probes <= 13);
    assert_true(t.resolves >= 11 && t.resolves <= 14);
    assert_int_equal(t.other_news, 2); /* the address, the rendezvous held */
    gcswait_rendezvous(&g, now, GCSWAIT_RDV_MESSAGE, "", &news);
    assert_int_equal(news.n, 1);
    assert_int_equal(news.item[0].event, GCSWAIT_SERVING);
    assert_true(gcswait_final(news.item[0].event));
    assert_string_equal(news.item[0].addr, "10.0.0.9");
    assert_non_null(strstr(news.item[0].text, "woken by the head's rendezvous"));
    assert_null(strstr(news.item[0].text, "confirmed"));
}

/* A wait that confirms (a rejoin): the message brings one Health/Check at once, before any lookup
 * that is due, and its SERVING ends the wait. */
static void test_confirmed_message_probes_once(void **state)
{
    struct gcswait g;
    struct gcswait_news news;
    struct tally t = {0};
    long now, sleep_ms;
    (void)state;
    gcswait_init(&g, "head.ns.svc", 6379, 8079, 0, 600000, 42);
    gcswait_confirm(&g, true);
    now = simulate(&g, 0, 6000, "10.0.0.9", GCSWAIT_RDV_CONNECTED, &t);
    gcswait_rendezvous(&g, now, GCSWAIT_RDV_MESSAGE, "", &news);
    assert_int_equal(news.n, 0);
    assert_int_equal(gcswait_next(&g, now + 10000, &sleep_ms), GCSWAIT_DO_PROBE); /* DNS is due too */
    gcswait_probed(&g, now + 1, true, "Health/Check", "", &news);
    assert_int_equal(news.n, 1);
    assert_int_equal(news.item[0].event, GCSWAIT_SERVING);
    assert_non_null(strstr(news.item[0].text, "woken by the head's rendezvous, confirmed"));
}

/* No rendezvous, and a GCS that listens but is not serving yet: it is polled every 30-50 ms, the
 * name once a second, the rendezvous tried again every 2 s; its loss is told once. */
static void test_lost_rendezvous_falls_back_to_polling(void **state)
{
    struct gcswait g;
    struct tally t = {.probe_stage = "Health/Check", .probe_reason = "NOT_SERVING"};
    (void)state;
    gcswait_init(&g, "head.ns.svc", 6379, 8079, 0, 600000, 7);
    simulate(&g, 0, 10000, "10.0.0.9", GCSWAIT_RDV_LOST, &t);
    assert_true(t.probes >= 10000 / 50 && t.probes <= 10000 / 30 + 2);
    assert_true(t.resolves >= 9 && t.resolves <= 11);
    assert_true(t.connects >= 5 && t.connects <= 6);
    assert_int_equal(t.other_news, 2); /* the address; "no rendezvous", once */
    assert_int_equal(t.progress, 2);
}

/* Nobody listening at the head's address (both ports refuse: an address, no process yet): the
 * poll backs off to about once a second (with the rendezvous retried every 2 s, each followed by
 * a probe) instead of 20-33 looks a second; a GCS that starts listening brings the fast poll back
 * at the next look. */
static void test_nobody_listening_backs_off(void **state)
{
    struct gcswait g;
    struct tally t = {0};
    long now;
    (void)state;
    gcswait_init(&g, "head.ns.svc", 6379, 8079, 0, 600000, 7);
    now = simulate(&g, 0, 60000, "10.0.0.9", GCSWAIT_RDV_LOST, &t);
    /* Before: 60000 / 50 = 1,200 probes at least. Now: ~1 a second plus one after each of the
     * 30 rendezvous retries, plus the ramp. */
    assert_true(t.probes >= 60 && t.probes <= 130);
    assert_true(t.connects >= 29 && t.connects <= 31);
    assert_true(t.resolves >= 59 && t.resolves <= 61);
    /* The GCS listens now (Health/Check answers NOT_SERVING): the next probe is 30-50 ms away. */
    gcswait_probed(&g, now, false, "Health/Check", "NOT_SERVING", &(struct gcswait_news){0});
    assert_true(g.next_probe_ms - now >= 30 && g.next_probe_ms - now <= 50);
}

/* A wait that confirms: the head's message, and then a GCS that does not serve: polling, without
 * the rendezvous again, and no SERVING. */
static void test_message_not_confirmed_polls(void **state)
{
    struct gcswait g;
    struct gcswait_news news;
    struct tally t = {0};
    long now;
    (void)state;
    gcswait_init(&g, "head.ns.svc", 6379, 8079, 0, 600000, 7);
    gcswait_confirm(&g, true);
    now = simulate(&g, 0, 100, "10.0.0.9", GCSWAIT_RDV_CONNECTED, &t);
    gcswait_rendezvous(&g, now, GCSWAIT_RDV_MESSAGE, "", &news);
    memset(&t, 0, sizeof(t));
    t.probe_stage = "Health/Check";
    t.probe_reason = "NOT_SERVING";
    simulate(&g, now, now + 1000, "10.0.0.9", GCSWAIT_RDV_CONNECTED, &t);
    assert_true(t.probes >= 20);
    assert_int_equal(t.connects, 0);
}

/* A new address while holding: told with the old one, and the rendezvous is sought there. */
static void test_new_address_moves_the_rendezvous(void **state)
{
    struct gcswait g;
    struct gcswait_news news;
    struct tally t = {0};
    long now, sleep_ms;
    (void)state;
    gcswait_init(&g, "head.ns.svc", 6379, 8079, 0, 600000, 7);
    now = simulate(&g, 0, 100, "10.0.0.9", GCSWAIT_RDV_CONNECTED, &t);
    gcswait_resolved(&g, now, "10.0.0.10", "", &news);
    assert_int_equal(news.n, 1);
    assert_int_equal(news.item[0].event, GCSWAIT_RESOLVED);
    assert_string_equal(news.item[0].addr, "10.0.0.10");
    assert_string_equal(news.item[0].text, "10.0.0.9");
    assert_int_equal(gcswait_next(&g, now, &sleep_ms), GCSWAIT_DO_CONNECT);
    /* The name gone: withdrawn, told, and only DNS again. */
    gcswait_resolved(&g, now + 1, NULL, "NXDOMAIN", &news);
    assert_int_equal(news.item[0].event, GCSWAIT_UNRESOLVED);
    assert_string_equal(g.addr, "");
}

/* The deadline: give up, naming the attempts and the last failure; off (port 0) never connects. */
static void test_deadline_and_off(void **state)
{
    struct gcswait g;
    struct gcswait_news news;
    struct tally t = {0};
    long now, sleep_ms;
    char expect[128];
    (void)state;
    gcswait_init(&g, "head.ns.svc", 6379, 0, 0, 3000, 7);
    now = simulate(&g, 0, 100000, "10.0.0.9", GCSWAIT_RDV_CONNECTED, &t);
    assert_int_equal(now, 3000);
    assert_int_equal(t.connects, 0);
    assert_int_equal(gcswait_next(&g, now, &sleep_ms), GCSWAIT_DO_GIVE_UP);
    gcswait_give_up(&g, now, &news);
    assert_int_equal(news.item[0].event, GCSWAIT_DEADLINE);
    snprintf(expect, sizeof(expect), "gave up waiting for GCS head.ns.svc:6379 after 3.0 s and %u attempts; last: TCP",
             g.attempt);
    assert_non_null(strstr(news.item[0].text, expect));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unresolved_asks_only_dns),
        cmocka_unit_test(test_held_rendezvous_barely_polls),
        cmocka_unit_test(test_lost_rendezvous_falls_back_to_polling),
        cmocka_unit_test(test_nobody_listening_backs_off),
        cmocka_unit_test(test_confirmed_message_probes_once),
        cmocka_unit_test(test_message_not_confirmed_polls),
        cmocka_unit_test(test_new_address_moves_the_rendezvous),
        cmocka_unit_test(test_deadline_and_off),
    };
    return cmocka_run_group_tests_name("gcswait", tests, NULL, NULL);
}
