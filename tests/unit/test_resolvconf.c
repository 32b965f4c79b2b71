/* Unit tests for lib/net/resolvconf.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "resolvconf.h"

/* The kubelet's file: search path, one nameserver, ndots:5, and the cluster domain from it. */
static void test_kubelet_file(void **state)
{
    struct resolvconf rc;
    (void)state;
    resolvconf_parse("search ml.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\n"
                     "options ndots:5\n",
                     &rc);
    assert_int_equal(rc.nsearch, 3);
    assert_string_equal(rc.search[0], "ml.svc.cluster.local");
    assert_int_equal(rc.nnameservers, 1);
    assert_string_equal(rc.nameservers[0], "10.96.0.10");
    assert_int_equal(rc.ndots, 5);
    assert_string_equal(resolvconf_cluster_domain(&rc), "cluster.local");
}

/* The last search/domain line wins; at most three nameservers; ndots is capped at 15. */
static void test_resolver_rules(void **state)
{
    struct resolvconf rc;
    (void)state;
    resolvconf_parse("search a.example\ndomain b.example\nnameserver 1.1.1.1\nnameserver 2.2.2.2\n"
                     "nameserver 3.3.3.3\nnameserver 4.4.4.4\noptions timeout:1 ndots:99 attempts:2\n",
                     &rc);
    assert_int_equal(rc.nsearch, 1);
    assert_string_equal(rc.search[0], "b.example");
    assert_int_equal(rc.nnameservers, 3);
    assert_int_equal(rc.ndots, 15);
    assert_null(resolvconf_cluster_domain(&rc));
}

/* Comments, junk and missing pieces leave defaults, never a crash. */
static void test_junk(void **state)
{
    struct resolvconf rc;
    (void)state;
    resolvconf_parse("# search x.svc.y\n; nameserver 9.9.9.9\nfoo bar\nnameserver\noptions ndots:x\n\t\n", &rc);
    assert_int_equal(rc.nsearch, 0);
    assert_int_equal(rc.nnameservers, 0);
    assert_int_equal(rc.ndots, 1);
    resolvconf_parse("", &rc);
    assert_int_equal(rc.ndots, 1);
    resolvconf_parse("options ndots:-2\n", &rc); /* no digits: the default */
    assert_int_equal(rc.ndots, 1);
    resolvconf_parse("options ndots:2x\n", &rc); /* the leading digits, as glibc reads them */
    assert_int_equal(rc.ndots, 2);
}

/* CRLF line ends and other blanks (\f, \v) separate words like spaces: no empty entries, and no
 * endless loop (a regression found by fuzzing; fuzz/regressions/resolvconf). */
static void test_crlf_and_odd_blanks(void **state)
{
    struct resolvconf rc;
    (void)state;
    resolvconf_parse("search ns1.svc.cluster.local svc.cluster.local\r\nnameserver 10.96.0.10\r\n"
                     "options ndots:5\r\n",
                     &rc);
    assert_int_equal(rc.nsearch, 2);
    assert_string_equal(rc.search[1], "svc.cluster.local");
    assert_int_equal(rc.nnameservers, 1);
    assert_string_equal(rc.nameservers[0], "10.96.0.10");
    assert_int_equal(rc.ndots, 5);
    resolvconf_parse("options ndots:0\f\nsearch a.svc.b\v\f c\n", &rc);
    assert_int_equal(rc.ndots, 0);
    assert_int_equal(rc.nsearch, 2);
    assert_string_equal(rc.search[1], "c");
}

/* A non-default domain. */
static void test_custom_domain(void **state)
{
    struct resolvconf rc;
    (void)state;
    resolvconf_parse("search prod.svc.corp.example svc.corp.example corp.example\n", &rc);
    assert_string_equal(resolvconf_cluster_domain(&rc), "corp.example");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kubelet_file),        cmocka_unit_test(test_resolver_rules), cmocka_unit_test(test_junk),
        cmocka_unit_test(test_crlf_and_odd_blanks), cmocka_unit_test(test_custom_domain),
    };
    return cmocka_run_group_tests_name("resolvconf", tests, NULL, NULL);
}
