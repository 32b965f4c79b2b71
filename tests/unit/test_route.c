/* Unit tests for sidecar/route.c: which endpoint a method and path reach, and /drain's deadline. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "route.h"

/* GET and HEAD reach the probes and /metrics; /drain takes POST too. */
static void test_paths(void **state)
{
    long ms = 0;
    (void)state;
    assert_int_equal(route_request("GET", "/healthz", NULL, &ms), ROUTE_HEALTHZ);
    assert_int_equal(route_request("HEAD", "/readyz", NULL, &ms), ROUTE_READYZ);
    assert_int_equal(route_request("GET", "/metrics", NULL, &ms), ROUTE_METRICS);
    assert_int_equal(route_request("GET", "/drain", NULL, &ms), ROUTE_DRAIN);
    assert_int_equal(ms, -1);
    assert_int_equal(route_request("POST", "/drain", NULL, &ms), ROUTE_DRAIN);
    assert_int_equal(route_request("GET", "/", NULL, &ms), ROUTE_NOT_FOUND);
    assert_int_equal(route_request("GET", "/healthz/", NULL, &ms), ROUTE_NOT_FOUND);
}

/* Other methods: 405 on a known path, 404 elsewhere; /drain has its own 405. */
static void test_methods(void **state)
{
    long ms = 0;
    (void)state;
    assert_int_equal(route_request("POST", "/healthz", NULL, &ms), ROUTE_WRONG_METHOD);
    assert_int_equal(route_request("DELETE", "/metrics", NULL, &ms), ROUTE_WRONG_METHOD);
    assert_int_equal(route_request("PUT", "/x", NULL, &ms), ROUTE_NOT_FOUND_OTHER);
    assert_int_equal(route_request("PUT", "/drain", NULL, &ms), ROUTE_DRAIN_METHOD);
    assert_int_equal(route_request("get", "/healthz", NULL, &ms), ROUTE_WRONG_METHOD);
}

/* deadline=SECONDS: whole seconds 1..3600, nothing else. */
static void test_deadline(void **state)
{
    long ms = 0;
    (void)state;
    assert_int_equal(route_request("POST", "/drain", "25", &ms), ROUTE_DRAIN);
    assert_int_equal(ms, 25000);
    assert_int_equal(route_request("GET", "/drain", "3600", &ms), ROUTE_DRAIN);
    assert_int_equal(ms, 3600000);
    assert_int_equal(route_request("GET", "/drain", "3601", &ms), ROUTE_BAD_DEADLINE);
    assert_int_equal(route_request("GET", "/drain", "0", &ms), ROUTE_BAD_DEADLINE);
    assert_int_equal(route_request("GET", "/drain", "", &ms), ROUTE_BAD_DEADLINE);
    assert_int_equal(route_request("GET", "/drain", "1.5", &ms), ROUTE_BAD_DEADLINE);
    assert_int_equal(route_request("GET", "/drain", "99999999999999999999", &ms), ROUTE_BAD_DEADLINE);
    assert_int_equal(route_request("GET", "/healthz", "x", &ms), ROUTE_HEALTHZ);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paths),
        cmocka_unit_test(test_methods),
        cmocka_unit_test(test_deadline),
    };
    return cmocka_run_group_tests_name("route", tests, NULL, NULL);
}
