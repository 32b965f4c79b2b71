/* Unit tests for lib/plan/pluginargs.c (and the Go flag syntax of lib/base/flags.c it uses). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pluginargs.h"

/* Volcano's defaults. */
static void test_defaults(void **state)
{
    struct plugin_args pa;
    (void)state;
    plugin_args_init(&pa);
    assert_string_equal(pa.head_task, "head");
    assert_string_equal(pa.head_container, "head");
    assert_string_equal(pa.worker_tasks, "worker");
    assert_string_equal(pa.worker_container, "worker");
    assert_false(pa.worker_given);
    assert_int_equal(pa.port, 6379);
    assert_int_equal(pa.dashboard_port, 8265);
    assert_int_equal(pa.client_port, 10001);
    assert_false(pa.port_given);
}

/* All seven flags, in --x=v, --x v and -x=v forms, across spaces, tabs and newlines. */
static void test_every_flag_every_form(void **state)
{
    struct plugin_args pa;
    struct errbuf err;
    (void)state;
    plugin_args_init(&pa);
    assert_int_equal(plugin_args_parse_list(&pa,
                                            " --head=ray-head\t--headContainer ray-c\n-worker=w "
                                            "--workerContainer=wc --port 6380 --dashboardPort=8266 "
                                            "-clientPort 10002 ",
                                            &err),
                     0);
    assert_string_equal(pa.head_task, "ray-head");
    assert_string_equal(pa.head_container, "ray-c");
    assert_string_equal(pa.worker_tasks, "w");
    assert_true(pa.worker_given);
    assert_string_equal(pa.worker_container, "wc");
    assert_int_equal(pa.port, 6380);
    assert_int_equal(pa.dashboard_port, 8266);
    assert_int_equal(pa.client_port, 10002);
    assert_true(pa.port_given);
}

static void expect_error(const char *list, const char *says)
{
    struct plugin_args pa;
    struct errbuf err;
    plugin_args_init(&pa);
    assert_int_equal(plugin_args_parse_list(&pa, list, &err), -1);
    if (!strstr(err.msg, says))
        fail_msg("'%s': message '%s' lacks '%s'", list, err.msg, says);
}

/* Each bad input names its flag and what is wrong. */
static void test_errors_name_the_flag(void **state)
{
    (void)state;
    expect_error("--clientServerPort=10001", "--clientServerPort");
    expect_error("--clientServerPort=10001", "--clientPort");
    expect_error("--head=head --bogus=1", "unknown flag --bogus");
    expect_error("--port=70000", "--port=70000: port out of range");
    expect_error("--dashboardPort=http", "--dashboardPort=http: port is not a number");
    expect_error("--port", "flag needs a value: --port");
    expect_error("head", "'head' is not a flag");
    expect_error("--head=Head", "not a valid task name");
    expect_error("--head=my_task", "not a valid task name");
    expect_error("--head=", "not a valid task name");
    expect_error("--head=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "at most 63");
    expect_error("---head=x", "bad flag syntax");
    expect_error("--=x", "bad flag syntax");
}

/* --worker takes one task or a comma list; each name is matched whole. */
static void test_worker_list(void **state)
{
    struct plugin_args pa;
    struct errbuf err;
    (void)state;
    plugin_args_init(&pa);
    assert_true(plugin_args_names_worker(&pa, "worker")); /* the default, for Volcano's sake */
    assert_int_equal(plugin_args_parse_list(&pa, "--worker=cpu-workers,gpu-workers", &err), 0);
    assert_true(pa.worker_given);
    assert_true(plugin_args_names_worker(&pa, "cpu-workers"));
    assert_true(plugin_args_names_worker(&pa, "gpu-workers"));
    assert_false(plugin_args_names_worker(&pa, "worker"));
    assert_false(plugin_args_names_worker(&pa, "cpu"));
    assert_false(plugin_args_names_worker(&pa, "cpu-workers,gpu-workers"));
    assert_false(plugin_args_names_worker(&pa, ""));
    expect_error("--worker=a,,b", "'' is not a valid task name");
    expect_error("--worker=a,", "'' is not a valid task name");
    expect_error("--worker=,a", "'' is not a valid task name");
    expect_error("--worker=a,B", "'B' is not a valid task name");
    expect_error("--worker=a_b", "not a valid task name");
}

/* An empty list changes nothing. */
static void test_empty_list(void **state)
{
    struct plugin_args pa;
    struct errbuf err;
    (void)state;
    plugin_args_init(&pa);
    assert_int_equal(plugin_args_parse_list(&pa, "  \n\t ", &err), 0);
    assert_int_equal(pa.port, 6379);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_every_flag_every_form),
        cmocka_unit_test(test_errors_name_the_flag),
        cmocka_unit_test(test_worker_list),
        cmocka_unit_test(test_empty_list),
    };
    return cmocka_run_group_tests_name("pluginargs", tests, NULL, NULL);
}
