/* Unit tests for lib/base/helper.c: a helper that ends when its channel closes is reaped with its
 * status, one that does not is killed after its grace (and no later), one without a channel is
 * killed at once, and fork's ends are closed on both sides. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "helper.h"

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Reads its channel until EOF, then exits 7. */
static int until_eof(int fd, void *arg)
{
    char c;
    (void)arg;
    while (read(fd, &c, 1) > 0)
        ;
    return 7;
}

/* Never ends by itself. */
static int forever(int fd, void *arg)
{
    (void)fd;
    (void)arg;
    sleep(60);
    return 0;
}

static int pair(int sv[2])
{
    return socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);
}

static void test_closing_the_channel_ends_it(void **state)
{
    int sv[2], status = 0, fd = -1;
    pid_t pid = -1;
    struct errbuf err;
    (void)state;
    assert_int_equal(pair(sv), 0);
    assert_int_equal(helper_start(&pid, &fd, sv[0], sv[1], until_eof, NULL, &err), 0);
    assert_true(pid > 0);
    assert_int_equal(fd, sv[0]);
    assert_int_equal(fcntl(sv[1], F_GETFD), -1); /* the child's end is closed here */
    assert_int_equal(helper_stop(&pid, &fd, 2000, &status), 0);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 7);
    assert_int_equal(pid, -1);
    assert_int_equal(fd, -1);
    assert_int_equal(helper_stop(&pid, &fd, 0, &status), -1); /* nothing left to stop */
}

static void test_one_that_stays_is_killed_after_its_grace(void **state)
{
    int sv[2], status = 0, fd = -1;
    pid_t pid = -1, child;
    struct errbuf err;
    long t0, took;
    (void)state;
    assert_int_equal(pair(sv), 0);
    assert_int_equal(helper_start(&pid, &fd, sv[0], sv[1], forever, NULL, &err), 0);
    child = pid;
    t0 = now_ms();
    assert_int_equal(helper_stop(&pid, &fd, 200, &status), 1);
    took = now_ms() - t0;
    assert_true(took >= 200 && took < 1500);
    assert_int_equal(pid, -1);
    assert_int_equal(waitpid(child, NULL, WNOHANG), -1); /* reaped: no zombie left */
    assert_int_equal(errno, ECHILD);
}

static void test_without_a_channel_it_is_killed_at_once(void **state)
{
    pid_t pid = -1, child;
    struct errbuf err;
    long t0;
    (void)state;
    assert_int_equal(helper_start(&pid, NULL, -1, -1, forever, NULL, &err), 0);
    child = pid;
    t0 = now_ms();
    assert_int_equal(helper_stop(&pid, NULL, 0, NULL), 1);
    assert_true(now_ms() - t0 < 1000);
    assert_int_equal(waitpid(child, NULL, WNOHANG), -1);
}

static void test_reap_waits_for_an_ending_helper(void **state)
{
    int sv[2], status = 0, fd = -1;
    pid_t pid = -1;
    struct errbuf err;
    (void)state;
    assert_int_equal(pair(sv), 0);
    assert_int_equal(helper_start(&pid, &fd, sv[0], sv[1], until_eof, NULL, &err), 0);
    close(fd);
    assert_int_equal(helper_reap(&pid, &status), 0);
    assert_int_equal(WEXITSTATUS(status), 7);
    assert_int_equal(pid, -1);
    assert_int_equal(helper_reap(&pid, &status), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_closing_the_channel_ends_it),
        cmocka_unit_test(test_one_that_stays_is_killed_after_its_grace),
        cmocka_unit_test(test_without_a_channel_it_is_killed_at_once),
        cmocka_unit_test(test_reap_waits_for_an_ending_helper),
    };
    return cmocka_run_group_tests_name("helper", tests, NULL, NULL);
}
