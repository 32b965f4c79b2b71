/* Unit tests for lib/base/proc.c's look at a process's open files (the drain hook's sign that
 * `ray start` is past its wait for its node: sidecar/drainclient.c). */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "proc.h"

static void test_a_file_held_open_is_found_by_its_name(void **state)
{
    char dir[] = "/tmp/rayboot-test-proc-XXXXXX", path[64];
    int fd;
    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/ray_process_exit.log", dir);
    assert_int_equal(proc_has_open("self", "ray_process_exit.log"), 0);
    fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(proc_has_open("self", "ray_process_exit.log"), 1);
    /* The whole last part of the path, not a suffix of it, nor a directory on the way. */
    assert_int_equal(proc_has_open("self", "process_exit.log"), 0);
    assert_int_equal(proc_has_open("self", dir + 5), 0);
    close(fd);
    assert_int_equal(proc_has_open("self", "ray_process_exit.log"), 0);
    unlink(path);
    rmdir(dir);
}

static void test_a_process_that_cannot_be_read_is_said_so(void **state)
{
    (void)state;
    assert_int_equal(proc_has_open("999999999", "x"), -1);
    assert_int_equal(proc_has_open("../../etc", "x"), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_file_held_open_is_found_by_its_name),
        cmocka_unit_test(test_a_process_that_cannot_be_read_is_said_so),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
