/* libcurl, set up one way for every caller. Every request sets every option it depends on, so
 * nothing leaks from the last one, without curl_easy_reset: that re-creates libcurl's c-ares
 * channel, which opens /etc/resolv.conf inside the prober's sandbox. What to ask and what the
 * answer means is the callers' (grpc.c, init/dashboard.c, sidecar/kubeapi.c). */
#include "httpc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

/* A body grows by doubling from this, up to its bound. */
#define HTTPC_BODY_FIRST_BYTES 256

int httpc_init(struct httpc *c, bool tls, struct errbuf *err)
{
    c->curl = NULL;
    if (curl_global_init(tls ? CURL_GLOBAL_DEFAULT : CURL_GLOBAL_NOTHING) != CURLE_OK || !(c->curl = curl_easy_init()))
        return errbuf_set(err, "libcurl failed to initialise");
    return 0;
}

void httpc_free(struct httpc *c)
{
    if (c->curl)
        curl_easy_cleanup(c->curl);
    c->curl = NULL;
}

void httpc_warm_up(struct httpc *c)
{
    curl_easy_setopt(c->curl, CURLOPT_URL, "http://127.0.0.1:0/");
    curl_easy_setopt(c->curl, CURLOPT_CONNECTTIMEOUT_MS, 100L);
    curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_perform(c->curl);
}

int httpc_body_append(struct httpc_body *b, const void *data, size_t n)
{
    size_t cap;
    char *grown;
    /* libcurl calls with zero bytes for an empty body, when buf may still be NULL: memcpy to NULL
     * is undefined even for zero bytes (found by fuzz/fuzz_grpc.c). */
    if (n == 0)
        return 0;
    if (n > b->max || b->len > b->max - n)
        return -1;
    if (b->len + n + 1 > b->cap) {
        cap = b->cap ? b->cap : HTTPC_BODY_FIRST_BYTES;
        while (cap < b->len + n + 1)
            cap *= 2;
        if (b->max < SIZE_MAX && cap > b->max + 1)
            cap = b->max + 1;
        grown = realloc(b->buf, cap);
        if (!grown)
            return -1;
        b->buf = grown;
        b->cap = cap;
    }
    memcpy(b->buf + b->len, data, n);
    b->len += n;
    b->buf[b->len] = '\0';
    return 0;
}

void httpc_body_free(struct httpc_body *b)
{
    free(b->buf);
    b->buf = NULL;
    b->len = 0;
    b->cap = 0;
}

void httpc_reply_free(struct httpc_reply *r)
{
    httpc_body_free(&r->body);
    r->status = 0;
}

/* What one transfer's callbacks share. */
struct transfer {
    struct httpc_body *body;
    bool too_large;
    const struct httpc_request *req;
};

static size_t on_body(char *data, size_t size, size_t nmemb, void *arg)
{
    struct transfer *t = arg;
    size_t n = size * nmemb;
    if (httpc_body_append(t->body, data, n) < 0) {
        t->too_large = n > t->body->max || t->body->len > t->body->max - n;
        return 0; /* libcurl aborts the transfer: CURLE_WRITE_ERROR */
    }
    return n;
}

static size_t on_header(char *line, size_t size, size_t nmemb, void *arg)
{
    struct transfer *t = arg;
    if (t->req->on_header)
        t->req->on_header(line, size * nmemb, t->req->header_ctx);
    return size * nmemb;
}

static int failure(CURLcode rc, const struct transfer *t, struct errbuf *err)
{
    switch (rc) {
    case CURLE_COULDNT_CONNECT:
        errbuf_set(err, "connection refused or unreachable");
        return HTTPC_REFUSED;
    case CURLE_OPERATION_TIMEDOUT:
        errbuf_set(err, "timeout");
        return HTTPC_TIMEOUT;
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
        errbuf_set(err, "connection reset");
        return HTTPC_RESET;
    case CURLE_WRITE_ERROR:
        if (!t->too_large)
            break;
        errbuf_set(err, "reply too large");
        return HTTPC_TOO_LARGE;
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
        errbuf_set(err, "HTTP/2 error (or the stream was reset)");
        return HTTPC_HTTP2;
    case CURLE_GOT_NOTHING:
        errbuf_set(err, "the peer closed without an answer");
        return HTTPC_NO_ANSWER;
    case CURLE_PEER_FAILED_VERIFICATION:
        errbuf_set(
            err,
            "TLS: the peer's certificate is not signed by the CA given, has expired, or does not name the host called");
        return HTTPC_TLS;
    case CURLE_WEIRD_SERVER_REPLY:
        errbuf_set(err, "not an HTTP server");
        return HTTPC_BAD_REPLY;
    default:
        break;
    }
    errbuf_set(err, "%s", curl_easy_strerror(rc));
    return HTTPC_OTHER;
}

/* The method and body: GET, or POST with the body (another method name is sent as given). */
static void set_method(CURL *curl, const struct httpc_request *req)
{
    if (req->body) {
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, (long)req->body_len);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, req->body);
    } else {
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, NULL);
        curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
    }
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST,
                     strcmp(req->method, req->body ? "POST" : "GET") == 0 ? NULL : req->method);
}

/* The client's certificate and key for mutual TLS, or none. libcurl copies the certificate with
 * a NUL after it but hands the key's bytes to mbedTLS as they are, and mbedTLS reads PEM only
 * up to and including its NUL: the key's blob counts its NUL. The key is not copied (the caller's
 * buffer, which it zeroes, is the only one), so the handle forgets it after the transfer. */
static void set_client_identity(CURL *curl, const struct httpc_request *req)
{
    struct curl_blob cert = {(void *)(uintptr_t)req->client_cert, req->client_cert_len, CURL_BLOB_COPY};
    struct curl_blob key = {(void *)(uintptr_t)req->client_key, req->client_key_len + 1, CURL_BLOB_NOCOPY};
    curl_easy_setopt(curl, CURLOPT_SSLCERT_BLOB, req->client_cert ? &cert : NULL);
    curl_easy_setopt(curl, CURLOPT_SSLKEY_BLOB, req->client_cert && req->client_key ? &key : NULL);
}

/* Header lines may hold a secret: libcurl's copies are zeroed before they are freed. */
static void free_lines(struct curl_slist *list)
{
    for (struct curl_slist *l = list; l; l = l->next)
        explicit_bzero(l->data, strlen(l->data));
    curl_slist_free_all(list);
}

/* before_transfer, once per transfer, at the first of: libcurl starting to resolve the name
 * (libcurl 8 makes its c-ares channel only then, reading /etc/resolv.conf, and calls this before
 * any query is sent), the socket of a new connection before it connects (a name pinned by
 * CURLOPT_RESOLVE or found in the cache is not resolved), the request on a reused connection. */
struct hook_once {
    const struct httpc_request *req;
    struct errbuf *err;
    bool ran, failed;
};

static bool hook_failed(struct hook_once *h)
{
    if (!h->ran) {
        h->ran = true;
        h->failed = h->req->before_transfer(h->req->before_ctx, h->err) < 0;
    }
    return h->failed;
}

static int hook_at_resolve(void *resolver, void *reserved, void *ctx)
{
    (void)resolver;
    (void)reserved;
    return hook_failed(ctx) ? 1 : 0;
}

static int hook_at_socket(void *ctx, curl_socket_t fd, curlsocktype purpose)
{
    (void)fd;
    (void)purpose;
    return hook_failed(ctx) ? CURL_SOCKOPT_ERROR : CURL_SOCKOPT_OK;
}

static int hook_at_request(void *ctx, char *primary_ip, char *local_ip, int primary_port, int local_port)
{
    (void)primary_ip;
    (void)local_ip;
    (void)primary_port;
    (void)local_port;
    return hook_failed(ctx) ? CURL_PREREQFUNC_ABORT : CURL_PREREQFUNC_OK;
}

/* The transfer with before_transfer run at its start (hook_once). CURLE_ABORTED_BY_CALLBACK when
 * the hook fails, its message in err. */
static CURLcode perform_with_hook(CURL *curl, const struct httpc_request *req, struct errbuf *err)
{
    struct hook_once h = {req, err, false, false};
    CURLcode rc;
    curl_easy_setopt(curl, CURLOPT_RESOLVER_START_FUNCTION, hook_at_resolve);
    curl_easy_setopt(curl, CURLOPT_RESOLVER_START_DATA, &h);
    curl_easy_setopt(curl, CURLOPT_SOCKOPTFUNCTION, hook_at_socket);
    curl_easy_setopt(curl, CURLOPT_SOCKOPTDATA, &h);
    curl_easy_setopt(curl, CURLOPT_PREREQFUNCTION, hook_at_request);
    curl_easy_setopt(curl, CURLOPT_PREREQDATA, &h);
    rc = curl_easy_perform(curl);
    curl_easy_setopt(curl, CURLOPT_RESOLVER_START_FUNCTION, NULL);
    curl_easy_setopt(curl, CURLOPT_SOCKOPTFUNCTION, NULL);
    curl_easy_setopt(curl, CURLOPT_PREREQFUNCTION, NULL);
    return h.failed ? CURLE_ABORTED_BY_CALLBACK : rc;
}

static CURLcode on_tls_config(CURL *curl, void *tls_config, void *arg)
{
    const struct httpc_request *req = arg;
    (void)curl;
    return req->tls_setup(tls_config, req->tls_ctx) < 0 ? CURLE_ABORTED_BY_CALLBACK : CURLE_OK;
}

static int append_lines(struct curl_slist **list, const char *const *lines)
{
    for (const char *const *l = lines; l && *l; l++) {
        struct curl_slist *grown = curl_slist_append(*list, *l);
        if (!grown)
            return -1;
        *list = grown;
    }
    return 0;
}

int httpc_request(struct httpc *c, const struct httpc_request *req, struct httpc_reply *reply, struct errbuf *err)
{
    CURL *curl = c->curl;
    struct curl_slist *headers = NULL, *resolve = NULL;
    const char *pin[] = {req->resolve, NULL};
    struct transfer t = {&reply->body, false, req};
    CURLcode rc;

    memset(reply, 0, sizeof(*reply));
    reply->body.max = req->max_reply_bytes;
    if (append_lines(&headers, req->headers) < 0 || append_lines(&resolve, pin) < 0) {
        free_lines(headers);
        curl_slist_free_all(resolve);
        errbuf_set(err, "out of memory");
        return HTTPC_OTHER;
    }
    curl_easy_setopt(curl, CURLOPT_URL, req->url);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, req->protocol);
    curl_easy_setopt(curl, CURLOPT_HTTP_VERSION,
                     req->version == HTTPC_H2C ? (long)CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE
                                               : (long)CURL_HTTP_VERSION_NONE);
    set_method(curl, req);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_RESOLVE, resolve);
    if (req->ca_file)
        curl_easy_setopt(curl, CURLOPT_CAINFO, req->ca_file);
    if (req->ca_blob) {
        struct curl_blob ca = {(void *)req->ca_blob, req->ca_blob_len, CURL_BLOB_COPY};
        curl_easy_setopt(curl, CURLOPT_CAINFO_BLOB, &ca);
    }
    set_client_identity(curl, req);
    if (strcmp(req->protocol, "https") == 0) /* at least: never TLS 1.0 or 1.1 */
        curl_easy_setopt(curl, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
    /* Unknown to a libcurl without TLS (rayboot's), which never makes a TLS connection. */
    curl_easy_setopt(curl, CURLOPT_SSL_CTX_FUNCTION, req->tls_setup ? on_tls_config : NULL);
    curl_easy_setopt(curl, CURLOPT_SSL_CTX_DATA, req->tls_setup ? (void *)req : NULL);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, req->connect_timeout_ms);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, req->timeout_ms);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_FRESH_CONNECT, req->fresh_connection ? 1L : 0L);
    curl_easy_setopt(curl, CURLOPT_FORBID_REUSE, req->fresh_connection ? 1L : 0L);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, req->user_agent);
    rc = req->before_transfer ? perform_with_hook(curl, req, err) : curl_easy_perform(curl);
    /* The lists must outlive the transfer only: the handle forgets them before they go. */
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, NULL);
    curl_easy_setopt(curl, CURLOPT_RESOLVE, NULL);
    curl_easy_setopt(curl, CURLOPT_SSLKEY_BLOB, NULL);
    free_lines(headers);
    curl_slist_free_all(resolve);
    if (rc == CURLE_ABORTED_BY_CALLBACK && req->before_transfer) {
        httpc_reply_free(reply);
        return HTTPC_OTHER; /* the hook's message is in err */
    }
    if (rc != CURLE_OK) {
        httpc_reply_free(reply);
        return failure(rc, &t, err);
    }
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &reply->status);
    if (!reply->body.buf) {
        reply->body.buf = calloc(1, 1); /* an empty body is still a string */
        reply->body.cap = 1;
        if (!reply->body.buf) {
            errbuf_set(err, "out of memory");
            return HTTPC_OTHER;
        }
    }
    return 0;
}
