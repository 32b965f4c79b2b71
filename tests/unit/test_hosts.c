/* Unit tests for lib/net/hosts.c: the pod's FQDN and address lookups in kubelet-format /etc/hosts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "hosts.h"

static const char kubelet[] =
    "# Kubernetes-managed hosts file.\n"
    "127.0.0.1\tlocalhost\n"
    "::1\tlocalhost ip6-localhost ip6-loopback\n"
    "fe00::0\tip6-localnet\n"
    "10.244.1.5\tray-cluster-head-0.ray-cluster.default.svc.cluster.local\tray-cluster-head-0\n";

/* The FQDN on the line that names the short hostname. */
static void test_fqdn_from_kubelet_file(void **state)
{
    char fqdn[DNS_NAME_MAX_BYTES + 1];
    (void)state;
    assert_int_equal(hosts_find_fqdn(kubelet, "ray-cluster-head-0", fqdn), 0);
    assert_string_equal(fqdn, "ray-cluster-head-0.ray-cluster.default.svc.cluster.local");
}

/* A hostname that is only a prefix of another must not match it. */
static void test_prefix_is_not_a_match(void **state)
{
    char fqdn[DNS_NAME_MAX_BYTES + 1];
    (void)state;
    assert_int_equal(hosts_find_fqdn("10.0.0.1 w-01.j.ns.svc.cluster.local w-01\n", "w-0", fqdn), -1);
    assert_int_equal(hosts_find_fqdn("10.0.0.1 w-0.j.ns.svc.cluster.local w-01\n", "w-0", fqdn), -1);
}

/* Spaces, a trailing dot, comments after names, no final newline. */
static void test_layout_variants(void **state)
{
    char fqdn[DNS_NAME_MAX_BYTES + 1];
    (void)state;
    assert_int_equal(hosts_find_fqdn("  10.0.0.2   p-1.s.ns.svc.corp.   p-1 # mine", "p-1", fqdn), 0);
    assert_string_equal(fqdn, "p-1.s.ns.svc.corp");
    assert_int_equal(hosts_find_fqdn("# 10.0.0.2 p-1.s.ns.svc.corp p-1\n", "p-1", fqdn), -1);
    assert_int_equal(hosts_find_fqdn("", "p-1", fqdn), -1);
    assert_int_equal(hosts_find_fqdn(kubelet, "", fqdn), -1);
}

/* The short name alone is not an FQDN; the FQDN without the short name on its line is not ours. */
static void test_needs_both_names(void **state)
{
    char fqdn[DNS_NAME_MAX_BYTES + 1];
    (void)state;
    assert_int_equal(hosts_find_fqdn("10.0.0.3\tlonely-pod\n", "lonely-pod", fqdn), -1);
    assert_int_equal(hosts_find_fqdn("10.0.0.3\tlonely-pod.s.ns.svc.cluster.local\n", "lonely-pod", fqdn), -1);
}

/* Address lookup: case-insensitive, trailing dot ignored, first match wins. */
static void test_lookup_addr(void **state)
{
    char addr[64];
    (void)state;
    assert_int_equal(hosts_lookup_addr(kubelet, "RAY-CLUSTER-HEAD-0", addr, sizeof(addr)), 0);
    assert_string_equal(addr, "10.244.1.5");
    assert_int_equal(
        hosts_lookup_addr(kubelet, "ray-cluster-head-0.ray-cluster.default.svc.cluster.local.", addr, sizeof(addr)), 0);
    assert_string_equal(addr, "10.244.1.5");
    assert_int_equal(hosts_lookup_addr(kubelet, "ip6-localhost", addr, sizeof(addr)), 0);
    assert_string_equal(addr, "::1");
    assert_int_equal(hosts_lookup_addr(kubelet, "absent", addr, sizeof(addr)), -1);
    assert_int_equal(hosts_lookup_addr(kubelet, "localhost", addr, 3), -1); /* no address fits */
}

/* A host's own address is never a loopback line's: Debian's "127.0.1.1 myvm", Docker's
 * "127.0.0.1 localhost" and ::1 lines are skipped, a later real line found. */
static void test_own_addr_skips_loopback(void **state)
{
    char addr[64];
    (void)state;
    assert_int_equal(hosts_lookup_own_addr("127.0.0.1\tlocalhost\n127.0.1.1\tmyvm.lan myvm\n::1\tmyvm\n", "myvm", addr,
                                           sizeof(addr)),
                     -1);
    assert_int_equal(hosts_lookup_own_addr("127.0.0.1 w\n::ffff:127.0.0.1 w\n172.17.0.3\tw\n", "w", addr, sizeof(addr)),
                     0);
    assert_string_equal(addr, "172.17.0.3");
    assert_int_equal(hosts_lookup_own_addr("fd00::5 w\n", "w", addr, sizeof(addr)), 0);
    assert_string_equal(addr, "fd00::5");
    assert_int_equal(hosts_lookup_own_addr("128.0.0.1 w\n", "w", addr, sizeof(addr)), 0);
    /* The plain lookup still answers loopback (other names resolve there). */
    assert_int_equal(hosts_lookup_addr("127.0.1.1\tmyvm\n", "myvm", addr, sizeof(addr)), 0);
    assert_string_equal(addr, "127.0.1.1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fqdn_from_kubelet_file),
        cmocka_unit_test(test_prefix_is_not_a_match),
        cmocka_unit_test(test_layout_variants),
        cmocka_unit_test(test_needs_both_names),
        cmocka_unit_test(test_lookup_addr),
        cmocka_unit_test(test_own_addr_skips_loopback),
    };
    return cmocka_run_group_tests_name("hosts", tests, NULL, NULL);
}
