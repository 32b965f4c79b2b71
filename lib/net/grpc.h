/* Unary gRPC calls over HTTP/2 (prior knowledge), cleartext or, with Ray's TLS, mutual TLS, with
 * libcurl: the only way rayboot talks to Ray's GCS. */
#ifndef RAYBOOT_GRPC_H
#define RAYBOOT_GRPC_H

#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"
#include "httpc.h"

/* One metadata line sent with every call, "authorization: Bearer <token>": Ray's token and its
 * bound are lib/ray/rayauth.h's (RAYAUTH_HEADER_MAX_BYTES, checked equal where it is copied). */
#define GRPC_AUTH_HEADER_MAX_BYTES (4096 + 32)

/* The status a GCS in token mode answers to a missing or wrong token. */
#define GRPC_STATUS_UNAUTHENTICATED 16

/* Ray's TLS (RAY_USE_TLS) as a client speaks it: the CA bundle that must have signed the server's
 * certificate, and this client's own certificate and key (Ray's gRPC servers ask for one). PEM
 * in memory, each len bytes followed by a NUL. lib/ray/raytls.h fills it. */
struct grpc_tls {
    const char *ca;
    size_t ca_len;
    const char *cert;
    size_t cert_len;
    const char *key;
    size_t key_len;
};

struct grpc_client {
    struct httpc http;          /* one connection per call (no reuse) */
    const struct grpc_tls *tls; /* NULL: HTTP/2 cleartext; else TLS, verified before anything is sent */
    long budget_ms;             /* > 0: caps every timeout of the next calls (deadline.h) */
    /* "authorization: Bearer <token>" sent with every call (rayauth.h), or "": zeroed by
     * grpc_client_free. */
    char auth_header[GRPC_AUTH_HEADER_MAX_BYTES];
    int last_grpc_status; /* the last call's grpc-status, -1 when it got none */
};

struct grpc_call_limits {
    long connect_timeout_ms;
    long total_timeout_ms;
    size_t max_reply_bytes; /* a reply body past this aborts the call */
};

struct grpc_reply {
    struct httpc_body body; /* the frame bytes as received; grpc_reply_free */
    const uint8_t *msg;     /* the decoded message inside body, after a successful call */
    size_t msg_len;
    int grpc_status; /* -1 until seen */
    char grpc_message[160];
};

/* Sets up libcurl and makes its first transfer (httpc_warm_up): the prober calls this before it
 * confines itself. tls: NULL, or Ray's TLS for every call (it must outlive the client). */
int grpc_client_init(struct grpc_client *c, const struct grpc_tls *tls, struct errbuf *err);
void grpc_client_free(struct grpc_client *c);
void grpc_reply_free(struct grpc_reply *r);

/* Calls path (e.g. "/grpc.health.v1.Health/Check") on ip:port with one request message.
 * Returns 0 when the server answered HTTP 200, grpc-status 0 and exactly one well-formed frame
 * (reply->msg), or -1 with a short reason ("connection refused", "timeout", "grpc-status 14
 * (...)", "reply frame declares ..."). ip is a numeric address; IPv6 without brackets. With TLS
 * the server's certificate must chain to the CA and name ip (an iPAddress subjectAltName) before
 * a byte of the call (its token among them) is sent. */
int grpc_call(struct grpc_client *c, const char *ip, int port, const char *path, const uint8_t *req, size_t req_len,
              const struct grpc_call_limits *limits, struct grpc_reply *reply, struct errbuf *err);

/* What the finished transfer means, as grpc_call returns it, apart from libcurl so that it can be
 * fuzzed: the body went through httpc_body_append (bounded), the headers and trailers through
 * grpc_header_line into reply->grpc_status and grpc_message. */
int grpc_reply_check(long http_status, struct grpc_reply *reply, struct errbuf *err);

#endif
