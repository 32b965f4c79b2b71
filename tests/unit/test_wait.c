/* Unit tests for lib/wait.c's sleep: what arrives on the stop fd is handed to the check, which
 * alone decides whether the wait ends; a wait the check lets go on sleeps what was left. (The
 * waits for the GCS and the workers are tested against a stand-in GCS: tests/contract.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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
    };
    return cmocka_run_group_tests_name("wait", tests, NULL, NULL);
}
