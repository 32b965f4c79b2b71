/* Unit tests for lib/confine/secrets.c: in a forked child (the prctl, the limit and the environment are
 * the test process's own), a hidden process is non-dumpable, and a helper that shed its secrets is
 * non-dumpable, has no environment left (the bytes zeroed, not only unlinked) and no core limit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <valgrind/valgrind.h>

#include "secrets.h"

#define SECRET "RAY_AUTH_TOKEN=0123456789abcdef0123456789abcdef"

static int in_child(int (*check)(void))
{
    int status = 0;
    pid_t pid = fork();
    if (pid == 0)
        _exit(check());
    assert_true(pid > 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static int hide(void)
{
    struct errbuf err;
    if (prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 1)
        return 10; /* the control: a test process is dumpable */
    if (secrets_hide_process(&err) < 0)
        return 11;
    return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0 ? 0 : 12;
}

static int shed(void)
{
    struct errbuf err;
    struct rlimit core;
    char *entry = strdup(SECRET);
    const char *value;
    if (!entry || putenv(entry) != 0 || !(value = getenv("RAY_AUTH_TOKEN")))
        return 20;
    if (secrets_shed(&err) < 0)
        return 21;
    if (prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0)
        return 22;
    if (getenv("RAY_AUTH_TOKEN") || getenv("PATH"))
        return 23;
    for (size_t i = 0; i < sizeof(SECRET) - 1; i++)
        if (entry[i] != '\0')
            return 24; /* the string itself was overwritten */
    if (getrlimit(RLIMIT_CORE, &core) < 0 || core.rlim_cur != 0 || core.rlim_max != 0)
        return 25;
    return 0;
}

static void test_hidden_process_is_not_dumpable(void **state)
{
    (void)state;
    assert_int_equal(in_child(hide), 0);
}

static void test_shed_leaves_no_environment_and_no_core(void **state)
{
    (void)state;
    /* Under valgrind the environment block /proc/self/stat names is valgrind's own, which its
     * client may not write: this one runs under ASan only (`make unit`). */
    if (RUNNING_ON_VALGRIND)
        skip();
    assert_int_equal(in_child(shed), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hidden_process_is_not_dumpable),
        cmocka_unit_test(test_shed_leaves_no_environment_and_no_core),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
