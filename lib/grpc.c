/* gRPC transport: libcurl with nghttp2, HTTP/2 prior knowledge, one unary call at a time.
 * Framing and trailers are parsed by lib/grpc_frame.c; message contents by lib/gcs.c. */
#include "grpc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "deadline.h"
#include "grpc_frame.h"

/* Large enough for a framed request we build (DrainNode is the largest, well under 1 KiB). */
#define GRPC_REQUEST_MAX_BYTES 4096

/* libcurl sets up its connection cache and its c-ares channel (which reads /etc/resolv.conf)
 * on the first transfer, not in curl_easy_init. One transfer that fails at once, before the
 * prober confines itself, gets that done while open(2) is still allowed. Port 0 on loopback is
 * refused by the kernel without any packet leaving. */
static void warm_up(struct grpc_client *c)
{
    curl_easy_setopt(c->curl, CURLOPT_URL, "http://127.0.0.1:0/");
    curl_easy_setopt(c->curl, CURLOPT_CONNECTTIMEOUT_MS, 100L);
    curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_perform(c->curl);
}

int grpc_client_init(struct grpc_client *c, struct errbuf *err)
{
    struct curl_slist *h = NULL;
    memset(c, 0, sizeof(*c));
    if (curl_global_init(CURL_GLOBAL_NOTHING) != CURLE_OK)
        return errbuf_set(err, "libcurl failed to initialise");
    c->curl = curl_easy_init();
    h = curl_slist_append(h, "content-type: application/grpc");
    if (h)
        h = curl_slist_append(h, "te: trailers");
    /* libcurl adds these by default; gRPC servers neither need nor want them. */
    if (h)
        h = curl_slist_append(h, "Accept:");
    if (h)
        h = curl_slist_append(h, "Expect:");
    c->headers = h;
    if (!c->curl || !h) {
        grpc_client_free(c);
        return errbuf_set(err, "out of memory");
    }
    warm_up(c);
    return 0;
}

void grpc_client_free(struct grpc_client *c)
{
    if (c->curl)
        curl_easy_cleanup(c->curl);
    curl_slist_free_all(c->headers);
    c->curl = NULL;
    c->headers = NULL;
}

void grpc_reply_free(struct grpc_reply *r)
{
    free(r->body);
    memset(r, 0, sizeof(*r));
}

int grpc_reply_append(struct grpc_reply *r, const void *data, size_t n)
{
    /* libcurl calls with zero bytes for an empty body, when body may still be NULL: memcpy to
     * NULL is undefined even for zero bytes (found by fuzz/fuzz_grpc.c). */
    if (n == 0)
        return 0;
    if (n > r->max - r->len)
        return -1;
    if (r->len + n > r->cap) {
        size_t cap = r->cap ? r->cap : 256;
        uint8_t *grown;
        while (cap < r->len + n)
            cap *= 2;
        if (cap > r->max)
            cap = r->max;
        grown = realloc(r->body, cap);
        if (!grown)
            return -1;
        r->body = grown;
        r->cap = cap;
    }
    memcpy(r->body + r->len, data, n);
    r->len += n;
    return 0;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *userp)
{
    size_t n = size * nmemb;
    /* Returning less than n aborts the transfer: CURLE_WRITE_ERROR. */
    return grpc_reply_append(userp, data, n) < 0 ? 0 : n;
}

/* Headers and trailers arrive here alike; only grpc-status and grpc-message matter. */
static size_t on_header(char *line, size_t size, size_t nmemb, void *userp)
{
    struct grpc_reply *r = userp;
    grpc_header_line(line, size * nmemb, &r->grpc_status, r->grpc_message, sizeof(r->grpc_message));
    return size * nmemb;
}

static const char *curl_reason(CURLcode rc)
{
    switch (rc) {
    case CURLE_COULDNT_CONNECT:
        return "connection refused or unreachable";
    case CURLE_OPERATION_TIMEDOUT:
        return "timeout";
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
        return "connection reset";
    case CURLE_WRITE_ERROR:
        return "reply too large";
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
        return "not an HTTP/2 gRPC server (or the stream was reset)";
    case CURLE_GOT_NOTHING:
        return "the peer closed without an HTTP/2 answer (not a gRPC server?)";
    case CURLE_WEIRD_SERVER_REPLY:
        return "not an HTTP/2 server";
    default:
        return curl_easy_strerror(rc);
    }
}

int grpc_call(struct grpc_client *c, const char *ip, int port, const char *path, const uint8_t *req,
              size_t req_len, const struct grpc_call_limits *limits, struct grpc_reply *reply,
              struct errbuf *err)
{
    uint8_t frame[GRPC_REQUEST_MAX_BYTES];
    char url[512];
    long frame_len, http_status = 0;
    CURL *curl = c->curl;
    CURLcode rc;

    memset(reply, 0, sizeof(*reply));
    reply->grpc_status = -1;
    reply->max = limits->max_reply_bytes;
    frame_len = grpc_frame_encode(req, req_len, frame, sizeof(frame));
    if (frame_len < 0)
        return errbuf_set(err, "request too large");
    if (snprintf(url, sizeof(url), strchr(ip, ':') ? "http://[%s]:%d%s" : "http://%s:%d%s", ip, port, path) >=
        (int)sizeof(url))
        return errbuf_set(err, "address too long");

    /* No curl_easy_reset: it re-creates libcurl's c-ares channel, which opens /etc/resolv.conf
     * inside the prober's sandbox. Every option that matters is set again here instead. */
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, (const char *)frame);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, frame_len);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, (struct curl_slist *)c->headers);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, deadline_cap_ms(limits->connect_timeout_ms, c->budget_ms));
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, deadline_cap_ms(limits->total_timeout_ms, c->budget_ms));
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    /* One connection per call: a restarted head has a new address, and a thousand waiting
     * workers should not each hold an idle connection to the GCS. */
    curl_easy_setopt(curl, CURLOPT_FRESH_CONNECT, 1L);
    curl_easy_setopt(curl, CURLOPT_FORBID_REUSE, 1L);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, reply);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, reply);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "rayboot");

    rc = curl_easy_perform(curl);
    if (rc != CURLE_OK)
        return errbuf_set(err, "%s", curl_reason(rc));
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &http_status);
    return grpc_reply_check(http_status, reply, err);
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
    return grpc_frame_decode(reply->body, reply->len, &reply->msg, &reply->msg_len, err);
}
