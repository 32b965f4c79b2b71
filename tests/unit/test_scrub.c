/* Unit tests for lib/confine/scrub.c's scrub_fds_but: in a forked child (the descriptors are the test
 * process's own), exactly 0-2 and the kept ones stay open, including descriptors far above 1,024. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "scrub.h"

/* Above the 1,024 a fixed loop would stop at, below the usual soft limit once raised. */
#define HIGH_FD 3000
#define SCAN_TO 4096

static int is_open(int fd)
{
    return fcntl(fd, F_GETFD) >= 0;
}

/* In the child: opens descriptors low and high, scrubs, and exits 0 when exactly the right ones
 * are left. */
static void child(int keep_a_at, int keep_b_at)
{
    struct rlimit rl;
    int fds[2];
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < SCAN_TO) {
        rl.rlim_cur = rl.rlim_max < SCAN_TO ? rl.rlim_max : SCAN_TO;
        (void)setrlimit(RLIMIT_NOFILE, &rl);
    }
    for (int i = 0; i < 4; i++)
        if (pipe(fds) < 0)
            _exit(10);
    if (dup2(STDERR_FILENO, 40) < 0 || dup2(STDERR_FILENO, 1023) < 0)
        _exit(11);
    (void)dup2(STDERR_FILENO, HIGH_FD); /* only when the limit allows it */
    if (keep_a_at >= 0 && dup2(STDERR_FILENO, keep_a_at) < 0)
        _exit(12);
    if (keep_b_at >= 0 && dup2(STDERR_FILENO, keep_b_at) < 0)
        _exit(13);
    scrub_fds_but(keep_a_at, keep_b_at);
    for (int fd = 0; fd < SCAN_TO; fd++) {
        int want = fd <= STDERR_FILENO || fd == keep_a_at || fd == keep_b_at;
        if (is_open(fd) != want)
            _exit(fd < 200 ? fd + 20 : 220); /* which one was wrong, roughly */
    }
    _exit(0);
}

static int run(int keep_a, int keep_b)
{
    int status = 0;
    pid_t pid = fork();
    if (pid == 0)
        child(keep_a, keep_b);
    assert_true(pid > 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static void test_keeps_exactly_two(void **state)
{
    (void)state;
    assert_int_equal(run(5, 9), 0);
    assert_int_equal(run(9, 5), 0);
}

static void test_keeps_one_or_none(void **state)
{
    (void)state;
    assert_int_equal(run(7, -1), 0);
    assert_int_equal(run(-1, -1), 0);
    assert_int_equal(run(6, 6), 0);
}

static void test_keeps_a_high_one(void **state)
{
    (void)state;
    assert_int_equal(run(3, 2500), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keeps_exactly_two),
        cmocka_unit_test(test_keeps_one_or_none),
        cmocka_unit_test(test_keeps_a_high_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
