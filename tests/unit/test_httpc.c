/* Unit tests for lib/net/httpc.c: the bounded body (its bound, its NUL, zero-byte appends) and a
 * failure's kind and reason (a refused connection on loopback; the GCS, dashboard and API server
 * cases are tested against stand-ins in tests/contract). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "httpc.h"

static void test_body_is_bounded_and_terminated(void **state)
{
    struct httpc_body b = {NULL, 0, 0, 10};
    (void)state;
    assert_int_equal(httpc_body_append(&b, "", 0), 0);
    assert_null(b.buf); /* nothing to hold yet */
    assert_int_equal(httpc_body_append(&b, "hello", 5), 0);
    assert_int_equal(httpc_body_append(&b, "world", 5), 0);
    assert_int_equal(b.len, 10);
    assert_string_equal(b.buf, "helloworld");
    assert_true(b.cap <= b.max + 1);
    /* One byte more is refused, and the body is left as it was. */
    assert_int_equal(httpc_body_append(&b, "!", 1), -1);
    assert_int_equal(b.len, 10);
    assert_string_equal(b.buf, "helloworld");
    httpc_body_free(&b);
    assert_null(b.buf);
    assert_int_equal(b.len, 0);
    b.max = 4;
    assert_int_equal(httpc_body_append(&b, "hello", 5), -1);
    assert_null(b.buf);
}

/* A loopback port nothing listens on: bound, then released. */
static int closed_port(void)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM, 0), port;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
    port = ntohs(sa.sin_port);
    close(fd);
    return port;
}

static void test_refused(void **state)
{
    struct httpc c;
    struct httpc_request req = {0};
    struct httpc_reply reply;
    struct errbuf err;
    char url[64];
    (void)state;
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/", closed_port());
    req.method = "GET";
    req.url = url;
    req.protocol = "http";
    req.connect_timeout_ms = 1000;
    req.timeout_ms = 2000;
    req.max_reply_bytes = 100;
    assert_int_equal(httpc_init(&c, false, &err), 0);
    assert_int_equal(httpc_request(&c, &req, &reply, &err), HTTPC_REFUSED);
    assert_string_equal(err.msg, "connection refused or unreachable");
    assert_null(reply.body.buf);
    /* Only the scheme given is followed. */
    req.protocol = "https";
    assert_int_equal(httpc_request(&c, &req, &reply, &err), HTTPC_OTHER);
    httpc_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_body_is_bounded_and_terminated),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests_name("httpc", tests, NULL, NULL);
}
