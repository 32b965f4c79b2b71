/* Unit tests for sidecar/route.c: which endpoint a port, method and path reach. Only POST /drain on
 * the drain port drains. */
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
    (void)state;
    assert_int_equal(route_request(PROBES, "GET", "/healthz"), ROUTE_HEALTHZ);
    assert_int_equal(route_request(PROBES, "HEAD", "/readyz"), ROUTE_READYZ);
    assert_int_equal(route_request(PROBES, "GET", "/metrics"), ROUTE_METRICS);
    assert_int_equal(route_request(PROBES, "GET", "/"), ROUTE_NOT_FOUND);
    assert_int_equal(route_request(PROBES, "GET", "/healthz/"), ROUTE_NOT_FOUND);
    assert_int_equal(route_request(PROBES, "GET", "/drain"), ROUTE_DRAIN_ELSEWHERE);
    assert_int_equal(route_request(PROBES, "POST", "/drain"), ROUTE_DRAIN_ELSEWHERE);
    assert_int_equal(route_request(PROBES, "HEAD", "/drain"), ROUTE_DRAIN_ELSEWHERE);
}

/* Other methods on the probes port: 405 on a known path, 404 elsewhere. */
static void test_probes_methods(void **state)
{
    (void)state;
    assert_int_equal(route_request(PROBES, "POST", "/healthz"), ROUTE_WRONG_METHOD);
    assert_int_equal(route_request(PROBES, "DELETE", "/metrics"), ROUTE_WRONG_METHOD);
    assert_int_equal(route_request(PROBES, "PUT", "/x"), ROUTE_NOT_FOUND_OTHER);
    assert_int_equal(route_request(PROBES, "get", "/healthz"), ROUTE_WRONG_METHOD);
}

/* The drain port: POST /drain only; HEAD and GET never drain; nothing else is there. */
static void test_drain_port(void **state)
{
    (void)state;
    assert_int_equal(route_request(DRAIN, "POST", "/drain"), ROUTE_DRAIN);
    assert_int_equal(route_request(DRAIN, "HEAD", "/drain"), ROUTE_DRAIN_METHOD);
    assert_int_equal(route_request(DRAIN, "GET", "/drain"), ROUTE_DRAIN_METHOD);
    assert_int_equal(route_request(DRAIN, "PUT", "/drain"), ROUTE_DRAIN_METHOD);
    assert_int_equal(route_request(DRAIN, "post", "/drain"), ROUTE_DRAIN_METHOD);
    assert_int_equal(route_request(DRAIN, "GET", "/healthz"), ROUTE_NOT_FOUND);
    assert_int_equal(route_request(DRAIN, "POST", "/healthz"), ROUTE_NOT_FOUND_OTHER);
    assert_int_equal(route_request(DRAIN, "POST", "/drain/"), ROUTE_NOT_FOUND_OTHER);
    assert_int_equal(route_request(DRAIN, "GET", "/hello"), ROUTE_HELLO);
    assert_int_equal(route_request(DRAIN, "HEAD", "/hello"), ROUTE_HELLO);
    assert_int_equal(route_request(DRAIN, "POST", "/hello"), ROUTE_NOT_FOUND_OTHER);
    assert_int_equal(route_request(PROBES, "GET", "/hello"), ROUTE_NOT_FOUND);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_probes_port),
        cmocka_unit_test(test_probes_methods),
        cmocka_unit_test(test_drain_port),
    };
    return cmocka_run_group_tests_name("route", tests, NULL, NULL);
}
