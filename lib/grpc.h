/* Unary gRPC calls over HTTP/2 cleartext (prior knowledge) with libcurl: the only way rayboot
 * talks to Ray's GCS. */
#ifndef RAYBOOT_GRPC_H
#define RAYBOOT_GRPC_H

#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"

struct grpc_client {
    void *curl; /* CURL *; each call opens and closes its own connection */
    void *headers;
    long budget_ms; /* > 0: caps every timeout of the next calls (deadline.h) */
};

struct grpc_call_limits {
    long connect_timeout_ms;
    long total_timeout_ms;
    size_t max_reply_bytes; /* a reply body past this aborts the call */
};

struct grpc_reply {
    uint8_t *body; /* malloc'd frame bytes as received; grpc_reply_free */
    size_t len;
    size_t cap;
    size_t max;
    const uint8_t *msg; /* the decoded message inside body, after a successful call */
    size_t msg_len;
    int grpc_status; /* -1 until seen */
    char grpc_message[160];
};

int grpc_client_init(struct grpc_client *c, struct errbuf *err);
void grpc_client_free(struct grpc_client *c);
void grpc_reply_free(struct grpc_reply *r);

/* Calls path (e.g. "/grpc.health.v1.Health/Check") on ip:port with one request message.
 * Returns 0 when the server answered HTTP 200, grpc-status 0 and exactly one well-formed frame
 * (reply->msg), or -1 with a short reason ("connection refused", "timeout", "grpc-status 14
 * (...)", "reply frame declares ..."). ip is a numeric address; IPv6 without brackets. */
int grpc_call(struct grpc_client *c, const char *ip, int port, const char *path, const uint8_t *req,
              size_t req_len, const struct grpc_call_limits *limits, struct grpc_reply *reply,
              struct errbuf *err);

/* The two halves of reading a reply, apart from libcurl so they can be fuzzed. grpc_reply_append
 * adds body bytes as they arrive (-1 past reply->max, or out of memory: the call is aborted);
 * grpc_reply_check says what the finished transfer means, as grpc_call returns it (the headers
 * and trailers went through grpc_header_line into reply->grpc_status and grpc_message). */
int grpc_reply_append(struct grpc_reply *r, const void *data, size_t n);
int grpc_reply_check(long http_status, struct grpc_reply *reply, struct errbuf *err);

#endif
