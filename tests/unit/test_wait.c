/* Unit tests for lib/ray/wait.c: what arrives on the stop fd is handed to the check, which alone
 * decides whether the wait ends; a wait the check lets go on sleeps what was left, and
 * wait_for_gcs goes on across signals on the prober's news and cancels the prober's wait when
 * stopped (a forked stand-in prober). The wait's policy is test_gcswait.c's; the waits against a
 * stand-in GCS are tests/contract's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "monotime.h"
#include "gcswait.h"
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

/* How the stand-in prober ends a wait. */
enum fake_end { END_CANCEL, END_TOKEN_TAKEN, END_TOKEN_REFUSED };

/* The prober as wait_for_gcs and then wait_read_ray_version see it: a forked stand-in on a
 * socketpair that takes the wait's request (confirm as the test asks), sends "signals" (bytes on
 * the stop pipe) that the check reads and lets go, a stale piece of news from another wait,
 * progress, then SERVING, and answers the Ray version's request (CheckAlive, which also takes the
 * token) as told; or, told to wait for a cancel, exits 0 only when PROBE_CANCEL comes. */
static void news(int fd, unsigned id, enum gcswait_event event, const char *addr, const char *text)
{
    struct prober_reply reply;
    memset(&reply, 0, sizeof(reply));
    reply.status = event == GCSWAIT_SERVING ? PROBER_OK : PROBER_FAILED;
    reply.wait.event = event;
    reply.wait.id = id;
    snprintf(reply.addr, sizeof(reply.addr), "%s", addr);
    snprintf(reply.reason, sizeof(reply.reason), "%s", text);
    if (send(fd, &reply, sizeof(reply), 0) != (ssize_t)sizeof(reply))
        _exit(5);
}

static void fake_prober(int fd, int signal_fd, enum fake_end end, bool confirm)
{
    struct prober_request req;
    struct timespec pause = {0, 20 * 1000 * 1000};
    if (recv(fd, &req, sizeof(req), 0) != (ssize_t)sizeof(req) || req.op != PROBE_WAIT_GCS ||
        strcmp(req.name, "head.ns.svc") != 0 || req.port != 6379 || req.wait.rendezvous_port != 8079 ||
        req.wait.confirm != (confirm ? 1 : 0) || strcmp(req.text, "ml/ray") != 0)
        _exit(3); /* the cluster's name goes with the wait: the prober binds the rendezvous' key to it */
    news(fd, req.wait.id, GCSWAIT_RESOLVED, "10.0.0.9", "");
    for (int i = 0; i < 15; i++) {
        if (write(signal_fd, "s", 1) != 1)
            _exit(4);
        nanosleep(&pause, NULL);
    }
    if (end == END_CANCEL) {
        struct pollfd pfd = {fd, POLLIN, 0};
        if (poll(&pfd, 1, 5000) != 1 || recv(fd, &req, sizeof(req), 0) != (ssize_t)sizeof(req))
            _exit(6);
        _exit(req.op == PROBE_CANCEL ? 0 : 7);
    }
    news(fd, req.wait.id + 1000, GCSWAIT_DEADLINE, "", "an earlier wait's news");
    news(fd, req.wait.id, GCSWAIT_PROGRESS, "", "waiting for GCS head.ns.svc:6379: TCP: connection refused");
    news(fd, req.wait.id, GCSWAIT_SERVING, "10.0.0.9", "GCS head.ns.svc:6379 is SERVING");
    if (recv(fd, &req, sizeof(req), 0) != (ssize_t)sizeof(req) || req.op != PROBE_RAY_VERSION ||
        strcmp(req.addr, "10.0.0.9") != 0)
        _exit(8);
    struct prober_reply reply;
    memset(&reply, 0, sizeof(reply));
    reply.status = end == END_TOKEN_REFUSED ? PROBER_UNAUTHENTICATED : PROBER_OK;
    snprintf(reply.value, sizeof(reply.value), "%s", "2.60.0");
    snprintf(reply.reason, sizeof(reply.reason), "%s", "the GCS refused this pod's token");
    if (send(fd, &reply, sizeof(reply), 0) != (ssize_t)sizeof(reply))
        _exit(9);
    _exit(0);
}

/* wait_for_gcs, then (when it is ready) wait_read_ray_version, as a worker's join does: *res
 * the last one's result. */
static int run_against_fake(struct fake_signals *f, enum fake_end end, bool confirm, enum wait_result *res, char *addr,
                            long *took)
{
    struct wait_stop stop = {f->fds[0], check, f};
    struct wait_gcs w = {"head.ns.svc", 6379, 10000, &stop, 8079, 0, 0, confirm, "ml/ray"};
    struct prober p;
    struct errbuf err;
    int sv[2], status = -1;
    long t0 = monotime_ms();
    pid_t pid;
    assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(sv[0]);
        fake_prober(sv[1], f->fds[1], end, confirm);
    }
    close(sv[1]);
    p.pid = pid;
    p.fd = sv[0];
    *res = wait_for_gcs(&p, &w, addr, &err);
    if (*res == WAIT_READY)
        *res = wait_read_ray_version(&p, addr, 6379, &err);
    *took = monotime_ms() - t0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    close(sv[0]);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
}

/* Signals that do not stop the wait leave it where it was; a stale piece of news from another
 * wait is skipped; SERVING ends it with the address. */
static void test_gcs_wait_goes_on_across_signals(void **state)
{
    struct fake_signals f;
    enum wait_result res;
    char addr[DNS_ADDR_MAX_BYTES];
    long took;
    (void)state;
    open_fake(&f, false, 0);
    assert_int_equal(run_against_fake(&f, END_TOKEN_TAKEN, false, &res, addr, &took), 0);
    assert_int_equal(res, WAIT_READY);
    assert_string_equal(addr, "10.0.0.9");
    assert_int_equal(f.bytes_read, 15);
    assert_true(f.checks >= 1);
    close_fake(&f);
}

/* The check says stop: the wait returns at once and the prober is told to cancel. */
static void test_gcs_wait_stop_cancels(void **state)
{
    struct fake_signals f;
    enum wait_result res;
    char addr[DNS_ADDR_MAX_BYTES];
    long took;
    (void)state;
    open_fake(&f, true, 3);
    assert_int_equal(run_against_fake(&f, END_CANCEL, true, &res, addr, &took), 0);
    assert_int_equal(res, WAIT_STOPPED);
    assert_true(took < 2000);
    assert_int_equal(f.bytes_read, 3);
    close_fake(&f);
}

/* A GCS that serves but refuses this pod's token: the wait is ready, and the version read that
 * follows says WAIT_UNAUTHENTICATED at once instead of after the deadline. */
static void test_gcs_wait_refused_token(void **state)
{
    struct fake_signals f;
    enum wait_result res;
    char addr[DNS_ADDR_MAX_BYTES];
    long took;
    (void)state;
    open_fake(&f, false, 0);
    assert_int_equal(run_against_fake(&f, END_TOKEN_REFUSED, false, &res, addr, &took), 0);
    assert_int_equal(res, WAIT_UNAUTHENTICATED);
    assert_true(took < 5000);
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
        cmocka_unit_test(test_gcs_wait_stop_cancels),
        cmocka_unit_test(test_gcs_wait_refused_token),
    };
    return cmocka_run_group_tests_name("wait", tests, NULL, NULL);
}
