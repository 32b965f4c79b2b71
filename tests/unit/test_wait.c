/* Unit tests for lib/wait.c: what arrives on the stop fd is handed to the check, which alone
 * decides whether the wait ends; a wait the check lets go on sleeps what was left, and
 * wait_for_gcs keeps its address and attempt count (prober_ask is replaced here, -Wl,--wrap: every
 * request answers at once and "a signal arrives" after each). The waits against a stand-in GCS
 * are tests/contract's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmocka.h>

#include "monotime.h"
#include "wait.h"

struct fake_signals {
    int fds[2]; /* a pipe: a byte written is "a signal arrived" */
    int checks;
    int bytes_read;
    bool stop_after; /* the check says stop once it has read stop_at bytes */
    int stop_at;
};

static bool check(void *ctx)
{
    struct fake_signals *f = ctx;
    char c;
    f->checks++;
    while (read(f->fds[0], &c, 1) == 1)
        f->bytes_read++;
    return f->stop_after && f->bytes_read >= f->stop_at;
}

static void open_fake(struct fake_signals *f, bool stop_after, int stop_at)
{
    assert_int_equal(pipe(f->fds), 0);
    assert_int_equal(fcntl(f->fds[0], F_SETFL, O_NONBLOCK), 0);
    f->checks = 0;
    f->bytes_read = 0;
    f->stop_after = stop_after;
    f->stop_at = stop_at;
}

static void close_fake(struct fake_signals *f)
{
    close(f->fds[0]);
    close(f->fds[1]);
}

/* A signal that is not a reason to stop is read, and the sleep goes on to its end. */
static void test_read_and_go_on(void **state)
{
    struct fake_signals f;
    struct wait_stop stop;
    long t0;
    (void)state;
    open_fake(&f, false, 0);
    stop = (struct wait_stop){f.fds[0], check, &f};
    assert_int_equal(write(f.fds[1], "x", 1), 1);
    t0 = monotime_ms();
    assert_int_equal(wait_sleep(150, &stop), 0);
    assert_true(monotime_ms() - t0 >= 150);
    assert_int_equal(f.checks, 1);
    assert_int_equal(f.bytes_read, 1);
    close_fake(&f);
}

/* The check says stop: the sleep ends at once. */
static void test_stop(void **state)
{
    struct fake_signals f;
    struct wait_stop stop;
    long t0;
    (void)state;
    open_fake(&f, true, 2);
    stop = (struct wait_stop){f.fds[0], check, &f};
    assert_int_equal(write(f.fds[1], "x", 1), 1);
    t0 = monotime_ms();
    assert_int_equal(wait_sleep(40, &stop), 0); /* one byte: not yet */
    assert_int_equal(write(f.fds[1], "x", 1), 1);
    assert_int_equal(wait_sleep(10000, &stop), -1);
    assert_true(monotime_ms() - t0 < 2000);
    assert_int_equal(f.bytes_read, 2);
    close_fake(&f);
}

/* A sleep of 0 ms still hands over what is pending: every wait reads the signals. */
static void test_zero_still_checks(void **state)
{
    struct fake_signals f;
    struct wait_stop stop;
    (void)state;
    open_fake(&f, true, 1);
    stop = (struct wait_stop){f.fds[0], check, &f};
    assert_int_equal(wait_sleep(0, &stop), 0);
    assert_int_equal(f.checks, 0); /* nothing pending: the check is not called */
    assert_int_equal(write(f.fds[1], "x", 1), 1);
    assert_int_equal(wait_sleep(0, &stop), -1);
    assert_int_equal(f.checks, 1);
    close_fake(&f);
}

/* The prober as wait_for_gcs sees it: the name resolves, the GCS refuses; each answer is
 * followed by "a signal" (a byte on the stop pipe) that the check reads and lets go. */
static struct fake_prober {
    int resolves;
    int tcps;
    int signal_fd;
} fake;

enum prober_status __wrap_prober_ask(struct prober *p, const struct prober_request *req, struct prober_reply *reply,
                                     struct errbuf *err);
enum prober_status __wrap_prober_ask(struct prober *p, const struct prober_request *req, struct prober_reply *reply,
                                     struct errbuf *err)
{
    (void)p;
    (void)err;
    memset(reply, 0, sizeof(*reply));
    assert_int_equal(write(fake.signal_fd, "s", 1), 1);
    if (req->op == PROBE_RESOLVE) {
        fake.resolves++;
        snprintf(reply->addr, sizeof(reply->addr), "10.0.0.9");
        return reply->status = PROBER_OK;
    }
    assert_int_equal(req->op, PROBE_TCP);
    assert_string_equal(req->addr, "10.0.0.9");
    fake.tcps++;
    snprintf(reply->reason, sizeof(reply->reason), "connection refused");
    return reply->status = PROBER_FAILED;
}

/* Signals that do not stop the wait leave it where it was: the name is resolved once (the next
 * look is due after a second), every attempt counts, the deadline is the first one. */
static void test_gcs_wait_goes_on_across_signals(void **state)
{
    struct fake_signals f;
    struct wait_stop stop;
    struct wait_gcs w = {"head.ns.svc", 6379, 600, NULL};
    struct prober p = {-1, -1};
    struct errbuf err;
    char addr[DNS_ADDR_MAX_BYTES], expect[128];
    long t0 = monotime_ms(), took;
    (void)state;
    open_fake(&f, false, 0);
    stop = (struct wait_stop){f.fds[0], check, &f};
    w.stop = &stop;
    memset(&fake, 0, sizeof(fake));
    fake.signal_fd = f.fds[1];
    assert_int_equal(wait_for_gcs(&p, &w, addr, &err), WAIT_DEADLINE);
    took = monotime_ms() - t0;
    assert_true(took >= 600 && took < 2000);
    assert_int_equal(fake.resolves, 1);
    assert_true(fake.tcps >= 6); /* 30-50 ms apart over 600 ms */
    assert_string_equal(addr, "10.0.0.9");
    /* Each attempt's sleep was cut by a signal, read, and slept on. */
    assert_int_equal(f.bytes_read, fake.resolves + fake.tcps);
    snprintf(expect, sizeof(expect), "s and %d attempts; last: TCP: connection refused", fake.tcps);
    assert_non_null(strstr(err.msg, expect));
    close_fake(&f);
}

/* No stop: a plain sleep. */
static void test_no_stop(void **state)
{
    long t0 = monotime_ms();
    (void)state;
    assert_int_equal(wait_sleep(30, NULL), 0);
    assert_true(monotime_ms() - t0 >= 30);
    assert_int_equal(wait_sleep(-5, NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_and_go_on),
        cmocka_unit_test(test_stop),
        cmocka_unit_test(test_zero_still_checks),
        cmocka_unit_test(test_no_stop),
        cmocka_unit_test(test_gcs_wait_goes_on_across_signals),
    };
    return cmocka_run_group_tests_name("wait", tests, NULL, NULL);
}
