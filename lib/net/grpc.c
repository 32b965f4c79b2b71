/* gRPC transport over lib/net/httpc.c: HTTP/2 prior knowledge (libcurl with nghttp2), one unary call
 * at a time, a fresh connection each. Framing and trailers are parsed by lib/net/grpc_frame.c;
 * message contents by lib/ray/gcs.c. */
#include "grpc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deadline.h"
#include "grpc_frame.h"

/* Large enough for a framed request we build (DrainNode is the largest, well under 1 KiB). */
#define GRPC_REQUEST_MAX_BYTES 4096

/* gRPC servers neither need nor want libcurl's default Accept and Expect. */
#define GRPC_HEADERS "content-type: application/grpc", "te: trailers", "Accept:", "Expect:"

int grpc_client_init(struct grpc_client *c, const struct grpc_tls *tls, struct errbuf *err)
{
    memset(c, 0, sizeof(*c));
    c->last_grpc_status = -1;
    c->tls = tls;
    if (httpc_init(&c->http, tls != NULL, err) < 0)
        return -1;
    httpc_warm_up(&c->http);
    return 0;
}

void grpc_client_free(struct grpc_client *c)
{
    explicit_bzero(c->auth_header, sizeof(c->auth_header));
    httpc_free(&c->http);
}

void grpc_reply_free(struct grpc_reply *r)
{
    httpc_body_free(&r->body);
    memset(r, 0, sizeof(*r));
}

/* Headers and trailers arrive here alike; only grpc-status and grpc-message matter. */
static void on_header(const char *line, size_t len, void *ctx)
{
    struct grpc_reply *r = ctx;
    grpc_header_line(line, len, &r->grpc_status, r->grpc_message, sizeof(r->grpc_message));
}

/* libcurl's failure in gRPC's terms, where HTTP's would mislead. */
static int call_failed(int failure, struct errbuf *err)
{
    if (failure == HTTPC_HTTP2)
        return errbuf_set(err, "not an HTTP/2 gRPC server (or the stream was reset)");
    if (failure == HTTPC_NO_ANSWER)
        return errbuf_set(err, "the peer closed without an HTTP/2 answer (not a gRPC server?)");
    if (failure == HTTPC_BAD_REPLY)
        return errbuf_set(err, "not an HTTP/2 server");
    return -1; /* httpc's reason stands */
}

int grpc_call(struct grpc_client *c, const char *ip, int port, const char *path, const uint8_t *req, size_t req_len,
              const struct grpc_call_limits *limits, struct grpc_reply *reply, struct errbuf *err)
{
    uint8_t frame[GRPC_REQUEST_MAX_BYTES];
    char url[512];
    /* The token, when there is one, goes with every call: Ray's GCS checks it on each. */
    const char *headers[] = {GRPC_HEADERS, c->auth_header[0] ? c->auth_header : NULL, NULL};
    long frame_len;
    struct httpc_request hr = {
        .method = "POST",
        .url = url,
        .protocol = c->tls ? "https" : "http",
        .version = HTTPC_H2C,
        .headers = headers,
        .body = frame,
        .connect_timeout_ms = deadline_cap_ms(limits->connect_timeout_ms, c->budget_ms),
        .timeout_ms = deadline_cap_ms(limits->total_timeout_ms, c->budget_ms),
        .max_reply_bytes = limits->max_reply_bytes,
        /* One connection per call: a restarted head has a new address, and a thousand waiting
         * workers should not each hold an idle connection to the GCS. */
        .fresh_connection = true,
        .user_agent = "rayboot",
        .on_header = on_header,
        .header_ctx = reply,
    };
    struct httpc_reply http;
    int rc;

    memset(reply, 0, sizeof(*reply));
    reply->grpc_status = -1;
    frame_len = grpc_frame_encode(req, req_len, frame, sizeof(frame));
    if (frame_len < 0)
        return errbuf_set(err, "request too large");
    if (snprintf(url, sizeof(url), strchr(ip, ':') ? "%s://[%s]:%d%s" : "%s://%s:%d%s", hr.protocol, ip, port, path) >=
        (int)sizeof(url))
        return errbuf_set(err, "address too long");
    hr.body_len = (size_t)frame_len;
    if (c->tls) {
        /* libcurl (mbedTLS) checks the chain and the address against the certificate in the
         * handshake, before the request's headers exist on the wire. */
        hr.ca_blob = c->tls->ca;
        hr.ca_blob_len = c->tls->ca_len;
        hr.client_cert = c->tls->cert;
        hr.client_cert_len = c->tls->cert_len;
        hr.client_key = c->tls->key;
        hr.client_key_len = c->tls->key_len;
    }
    c->last_grpc_status = -1;
    rc = httpc_request(&c->http, &hr, &http, err);
    if (rc < 0)
        return call_failed(rc, err);
    reply->body = http.body;
    c->last_grpc_status = reply->grpc_status;
    return grpc_reply_check(http.status, reply, err);
}

int grpc_reply_check(long http_status, struct grpc_reply *reply, struct errbuf *err)
{
    if (http_status != 200)
        return errbuf_set(err, "HTTP status %ld (not a gRPC reply)", http_status);
    if (reply->grpc_status == -1)
        return errbuf_set(err, "no grpc-status trailer");
    if (reply->grpc_status != 0)
        return errbuf_set(err, "grpc-status %d%s%s%s", reply->grpc_status, reply->grpc_message[0] ? " (" : "",
                          reply->grpc_message, reply->grpc_message[0] ? ")" : "");
    return grpc_frame_decode((const uint8_t *)reply->body.buf, reply->body.len, &reply->msg, &reply->msg_len, err);
}
