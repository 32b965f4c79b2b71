/* Unit tests for sidecar/route.c: which endpoint a port, method and path reach, and /drain's
 * deadline. Only POST /drain on the drain port drains. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "route.h"

#define PROBES ROUTE_PORT_PROBES
#define DRAIN ROUTE_PORT_DRAIN

/* The probes port: GET and HEAD reach the probes and /metrics; /drain is not served there. */
static void test_probes_port(void **state)
{
    long ms = 0;
    (void)state;
    assert_int_equal(route_request(PROBES, "GET", "/healthz", NULL, &ms), ROUTE_HEALTHZ);
    assert_int_equal(route_request(PROBES, "HEAD", "/readyz", NULL, &ms), ROUTE_READYZ);
    assert_int_equal(route_request(PROBES, "GET", "/metrics", NULL, &ms), ROUTE_METRICS);
    assert_int_equal(route_request(PROBES, "GET", "/", NULL, &ms), ROUTE_NOT_FOUND);
    assert_int_equal(route_request(PROBES, "GET", "/healthz/", NULL, &ms), ROUTE_NOT_FOUND);
    assert_int_equal(route_request(PROBES, "GET", "/healthz", "x", &ms), ROUTE_HEALTHZ);
    ms = 7;
    assert_int_equal(route_request(PROBES, "GET", "/drain", NULL, &ms), ROUTE_DRAIN_ELSEWHERE);
    assert_int_equal(route_request(PROBES, "POST", "/drain", "25", &ms), ROUTE_DRAIN_ELSEWHERE);
    assert_int_equal(route_request(PROBES, "HEAD", "/drain", NULL, &ms), ROUTE_DRAIN_ELSEWHERE);
    assert_int_equal(ms, 7);
}

/* Other methods on the probes port: 405 on a known path, 404 elsewhere. */
static void test_probes_methods(void **state)
{
    long ms = 0;
    (void)state;
    assert_int_equal(route_request(PROBES, "POST", "/healthz", NULL, &ms), ROUTE_WRONG_METHOD);
    assert_int_equal(route_request(PROBES, "DELETE", "/metrics", NULL, &ms), ROUTE_WRONG_METHOD);
    assert_int_equal(route_request(PROBES, "PUT", "/x", NULL, &ms), ROUTE_NOT_FOUND_OTHER);
    assert_int_equal(route_request(PROBES, "get", "/healthz", NULL, &ms), ROUTE_WRONG_METHOD);
}

/* The drain port: POST /drain only; HEAD and GET never drain; nothing else is there. */
static void test_drain_port(void **state)
{
    long ms = 0;
    (void)state;
    assert_int_equal(route_request(DRAIN, "POST", "/drain", NULL, &ms), ROUTE_DRAIN);
    assert_int_equal(ms, -1);
    assert_int_equal(route_request(DRAIN, "HEAD", "/drain", NULL, &ms), ROUTE_DRAIN_METHOD);
    assert_int_equal(route_request(DRAIN, "GET", "/drain", "25", &ms), ROUTE_DRAIN_METHOD);
    assert_int_equal(route_request(DRAIN, "PUT", "/drain", NULL, &ms), ROUTE_DRAIN_METHOD);
    assert_int_equal(route_request(DRAIN, "post", "/drain", NULL, &ms), ROUTE_DRAIN_METHOD);
    assert_int_equal(route_request(DRAIN, "GET", "/healthz", NULL, &ms), ROUTE_NOT_FOUND);
    assert_int_equal(route_request(DRAIN, "POST", "/healthz", NULL, &ms), ROUTE_NOT_FOUND_OTHER);
    assert_int_equal(route_request(DRAIN, "POST", "/drain/", NULL, &ms), ROUTE_NOT_FOUND_OTHER);
}

/* deadline=SECONDS: whole seconds 1..3600, nothing else. */
static void test_deadline(void **state)
{
    long ms = 0;
    (void)state;
    assert_int_equal(route_request(DRAIN, "POST", "/drain", "25", &ms), ROUTE_DRAIN);
    assert_int_equal(ms, 25000);
    assert_int_equal(route_request(DRAIN, "POST", "/drain", "3600", &ms), ROUTE_DRAIN);
    assert_int_equal(ms, 3600000);
    assert_int_equal(route_request(DRAIN, "POST", "/drain", "3601", &ms), ROUTE_BAD_DEADLINE);
    assert_int_equal(route_request(DRAIN, "POST", "/drain", "0", &ms), ROUTE_BAD_DEADLINE);
    assert_int_equal(route_request(DRAIN, "POST", "/drain", "", &ms), ROUTE_BAD_DEADLINE);
    assert_int_equal(route_request(DRAIN, "POST", "/drain", "1.5", &ms), ROUTE_BAD_DEADLINE);
    assert_int_equal(route_request(DRAIN, "POST", "/drain", "99999999999999999999", &ms), ROUTE_BAD_DEADLINE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_probes_port),
        cmocka_unit_test(test_probes_methods),
        cmocka_unit_test(test_drain_port),
        cmocka_unit_test(test_deadline),
    };
    return cmocka_run_group_tests_name("route", tests, NULL, NULL);
}
