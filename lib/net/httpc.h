/* The one small libcurl client every HTTP caller uses: gRPC to the GCS over h2c (grpc.c), the
 * Ray dashboard over HTTP/1.1 (init/dashboard.c), the Kubernetes API over HTTPS
 * (sidecar/kubeapi.c). One easy handle per client; every request sets all its options; the reply
 * body is bounded and always NUL-terminated; a failure comes back as a kind and a short reason.
 * HTTPS is TLS 1.2 at least; header lines (a bearer token among them) are zeroed once sent. */
#ifndef RAYBOOT_HTTPC_H
#define RAYBOOT_HTTPC_H

#include <stdbool.h>
#include <stddef.h>

#include "errbuf.h"

struct httpc {
    void *curl; /* CURL * */
};

enum httpc_version {
    HTTPC_HTTP_ANY, /* libcurl's choice: HTTP/1.1, or HTTP/2 where TLS negotiates it */
    HTTPC_H2C,      /* HTTP/2 with prior knowledge (gRPC): cleartext, or over TLS offering only "h2" */
};

struct httpc_request {
    const char *method; /* "GET" or "POST" (with a body) */
    const char *url;
    const char *protocol; /* "http" or "https": the only scheme the URL may have */
    enum httpc_version version;
    const char *const *headers; /* "Name: value" lines (or "Name:" to drop a default), NULL-terminated */
    const void *body;           /* POST body, or NULL */
    size_t body_len;
    long connect_timeout_ms;
    long timeout_ms;
    size_t max_reply_bytes; /* a longer body aborts the transfer: HTTPC_TOO_LARGE */
    bool fresh_connection;  /* a new connection, closed afterwards */
    const char *ca_file;    /* https: the CA bundle, or NULL */
    const void *ca_blob;    /* https: the CA bundle in memory (ca_blob_len bytes), or NULL */
    size_t ca_blob_len;
    /* https: this client's own certificate and key, PEM in memory, each followed by a NUL that
     * the length leaves out (mutual TLS, Ray's gRPC); or NULL. */
    const char *client_cert;
    size_t client_cert_len;
    const char *client_key;
    size_t client_key_len;
    const char *resolve; /* "name:port:address" pinned (CURLOPT_RESOLVE), or NULL */
    const char *user_agent;
    /* Each header and trailer line as it arrives, with its line ending; or NULL. */
    void (*on_header)(const char *line, size_t len, void *ctx);
    void *header_ctx;
    /* Called once everything the transfer needs is set up and before the first byte is sent
     * (the connection cache and the resolver channel exist: libcurl 8 makes its c-ares channel
     * when it starts resolving, and the call comes then, or before a new connection's socket
     * connects when nothing is resolved), so that a process can confine itself there; a failure
     * ends the request (HTTPC_OTHER, its message). NULL: no call. */
    int (*before_transfer)(void *ctx, struct errbuf *err);
    void *before_ctx;
    /* https: called with each connection's TLS configuration (libcurl's CURLOPT_SSL_CTX_FUNCTION:
     * mbedTLS's mbedtls_ssl_config, after libcurl's own set-up and before the handshake), for a
     * rule of the caller's on the peer's certificate; -1 ends the request. NULL: none. Kept out of
     * this file so that rayboot, whose libcurl has no TLS, links no TLS code. */
    int (*tls_setup)(void *tls_config, void *ctx);
    void *tls_ctx;
};

/* A reply body, grown as it arrives (httpc_body_append): len bytes and a NUL. */
struct httpc_body {
    char *buf; /* NULL until the first byte */
    size_t len;
    size_t cap;
    size_t max;
};

struct httpc_reply {
    long status; /* the HTTP status */
    struct httpc_body body;
};

/* Why a request got no HTTP answer (negative, so 0 / < 0 reads as usual). */
enum httpc_failure {
    HTTPC_REFUSED = -1,   /* "connection refused or unreachable" */
    HTTPC_TIMEOUT = -2,   /* "timeout" */
    HTTPC_RESET = -3,     /* "connection reset" */
    HTTPC_TOO_LARGE = -4, /* "reply too large": past max_reply_bytes */
    HTTPC_NO_ANSWER = -5, /* "the peer closed without an answer" */
    HTTPC_HTTP2 = -6,     /* an HTTP/2 error (or the stream was reset) */
    HTTPC_BAD_REPLY = -7, /* "not an HTTP server": a reply that is no HTTP */
    HTTPC_OTHER = -8,     /* libcurl's own words, or out of memory */
    HTTPC_TLS = -9,       /* the peer's certificate was not verified (a failed handshake: HTTPC_OTHER) */
};

/* tls: the handle will make HTTPS requests (libcurl's TLS set-up runs; only the sidecar's
 * libcurl has TLS). -1 with a message when libcurl cannot be set up. */
int httpc_init(struct httpc *c, bool tls, struct errbuf *err);
void httpc_free(struct httpc *c);

/* libcurl sets up its connection cache and its c-ares channel (which reads /etc/resolv.conf) on
 * the first transfer, not in httpc_init: one transfer that fails at once (port 0 on loopback, no
 * packet leaves) gets that done before a process confines itself. */
void httpc_warm_up(struct httpc *c);

/* One request. 0 with the reply, whatever its HTTP status (httpc_reply_free either way), or a
 * negative enum httpc_failure with its reason in err. */
int httpc_request(struct httpc *c, const struct httpc_request *req, struct httpc_reply *reply, struct errbuf *err);
void httpc_reply_free(struct httpc_reply *r);

/* Adds n bytes to the body (growing it, keeping it NUL-terminated). -1, the body unchanged, when
 * it would pass b->max or memory runs out. Apart from libcurl so that it can be fuzzed. */
int httpc_body_append(struct httpc_body *b, const void *data, size_t n);
void httpc_body_free(struct httpc_body *b);

#endif
