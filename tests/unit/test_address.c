/* Unit tests for lib/net/address.c: ports and host:port parsing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "address.h"

static void test_port_accepts_range_ends(void **state)
{
    struct errbuf err;
    int port = 0;
    (void)state;
    assert_int_equal(port_parse("1", &port, &err), 0);
    assert_int_equal(port, 1);
    assert_int_equal(port_parse("65535", &port, &err), 0);
    assert_int_equal(port, 65535);
}

static void test_port_rejects_garbage(void **state)
{
    static const char *const bad[] = {"", "0", "65536", "70000", "-1", "+80", "80x", " 80", "0x50", "999999999999"};
    struct errbuf err;
    int port = 42;
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(port_parse(bad[i], &port, &err), -1);
        assert_non_null(strstr(err.msg, "port"));
        assert_int_equal(port, 42);
    }
}

static void test_address_host_port(void **state)
{
    char host[ADDRESS_HOST_MAX_BYTES];
    struct errbuf err;
    int port = 0;
    (void)state;
    assert_int_equal(address_parse("ray-head.ray.svc.cluster.local:6390", host, &port, &err), 0);
    assert_string_equal(host, "ray-head.ray.svc.cluster.local");
    assert_int_equal(port, 6390);
    assert_int_equal(address_parse("head.example.:6379", host, &port, &err), 0);
    assert_string_equal(host, "head.example");
    assert_int_equal(address_parse("[fd00::1]:6379", host, &port, &err), 0);
    assert_string_equal(host, "fd00::1");
    assert_int_equal(address_parse("10.0.0.1:1", host, &port, &err), 0);
    assert_string_equal(host, "10.0.0.1");
}

static void test_address_errors_say_what_is_wrong(void **state)
{
    static const struct {
        const char *text;
        const char *says;
    } cases[] = {
        {"ray-head", "missing :port"},
        {":6379", "host is empty"},
        {"h:x", "not a number"},
        {"h:0", "out of range"},
        {"fd00::1:6379", "brackets"},
        {"[fd00::1]6379", "followed by :port"},
        {"[nothex]:6379", "not an IPv6"},
        {"bad host:6379", "not a valid host"},
        {"$(reboot):6379", "not a valid host"},
    };
    char host[ADDRESS_HOST_MAX_BYTES];
    struct errbuf err;
    int port;
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(address_parse(cases[i].text, host, &port, &err), -1);
        if (!strstr(err.msg, cases[i].says))
            fail_msg("%s: message '%s' lacks '%s'", cases[i].text, err.msg, cases[i].says);
    }
}

/* Numeric addresses become what connect() takes, port in network order; a name is refused. */
static void test_sockaddr_numeric_only(void **state)
{
    struct sockaddr_storage ss;
    socklen_t len = 0;
    struct errbuf err;
    (void)state;
    assert_int_equal(address_sockaddr("10.1.2.3", 6379, &ss, &len, &err), 0);
    assert_int_equal(ss.ss_family, AF_INET);
    assert_int_equal(len, sizeof(struct sockaddr_in));
    assert_int_equal(ntohs(((struct sockaddr_in *)&ss)->sin_port), 6379);
    assert_int_equal(ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr), 0x0a010203);
    assert_int_equal(address_sockaddr("fd00::7", 8079, &ss, &len, &err), 0);
    assert_int_equal(ss.ss_family, AF_INET6);
    assert_int_equal(len, sizeof(struct sockaddr_in6));
    assert_int_equal(ntohs(((struct sockaddr_in6 *)&ss)->sin6_port), 8079);
    assert_int_equal(((struct sockaddr_in6 *)&ss)->sin6_addr.s6_addr[15], 7);
    assert_int_equal(address_sockaddr("head.ns.svc", 6379, &ss, &len, &err), -1);
    assert_non_null(strstr(err.msg, "head.ns.svc"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_port_accepts_range_ends), cmocka_unit_test(test_port_rejects_garbage),
        cmocka_unit_test(test_address_host_port),       cmocka_unit_test(test_address_errors_say_what_is_wrong),
        cmocka_unit_test(test_sockaddr_numeric_only),
    };
    return cmocka_run_group_tests_name("address", tests, NULL, NULL);
}
