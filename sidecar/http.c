/* libmicrohttpd in external-epoll mode: its epoll fd sits in the caller's loop, which calls
 * http_run. Every connection is bounded: in number (when HTTP_CONNECTION_LIMIT are open, a new one
 * takes the place of the oldest that has not sent a whole request yet), and in time from accept to
 * close whatever the client sends (a client that trickles a byte now and then resets
 * libmicrohttpd's idle timeout, not this deadline). A connection is cut with shutdown(2), which
 * libmicrohttpd then sees as the end of the connection. There is no limit per client address: the
 * kubelet's probes come from an address every hostNetwork process of the node shares. Every answer
 * closes its connection; a request with a body is refused (413). What to answer is the handler's. */
#include "http.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <microhttpd.h>

#include "drainclient.h"
#include "drainproof.h"
#include "log.h"
#include "monotime.h"

/* Probes, a preStop hook and a metrics scraper are a handful of connections; 256 leaves room for
 * strangers without running the sidecar out of its memory limit (256 x HTTP_CONNECTION_MEMORY_BYTES
 * is 2 MiB) or its descriptors. Past it a new connection is not refused: the oldest one without a
 * whole request gives way (evict_oldest), so idle or slow clients, from one address or many, cannot
 * keep a probe out. */
#define HTTP_CONNECTION_LIMIT 256
/* Slots for connections cut but not closed yet: libmicrohttpd accepts up to 10 a run before it
 * reads (and closes) those cut in the run before, so at most two runs' worth are in flight. A new
 * connection is read in the run after its accept, so at most 20 come after it before it has sent
 * its request: a probe is never the oldest waiting. */
#define HTTP_CONNECTION_SLACK 32
#define HTTP_CONNECTION_SLOTS (HTTP_CONNECTION_LIMIT + HTTP_CONNECTION_SLACK)
/* Request line and headers together; a kubelet probe sends a few hundred bytes. */
#define HTTP_CONNECTION_MEMORY_BYTES 8192
/* From accept to close, whatever the client does (a suspended request excepted, which waits for
 * its handler): a probe's request is one write, its answer one more, and the kubelet gives a
 * probe 1 s by default. */
#define HTTP_CONNECTION_DEADLINE_MS 3000
/* libmicrohttpd's own idle timeout, in whole seconds: the deadline above cuts sooner anyway. */
#define HTTP_IDLE_TIMEOUT_S 3
/* Requests suspended at once (waiting for a drain): the callers are this pod's preStop hook, and
 * SIGTERM needs none. One more is told 429 (`rayboot-sidecar drain` asks again until it gets in,
 * so other callers of the pod cannot keep it from waiting). */
#define HTTP_WAITERS_MAX 8
/* How long the caller's loop may sleep at most: libmicrohttpd's own timers need a look. */
#define HTTP_MAX_SLEEP_MS 60000

struct http_conn {
    struct MHD_Connection *c; /* NULL: a free slot */
    int fd;
    unsigned long opened; /* accept order: the smallest is the oldest */
    long deadline_ms;     /* monotonic */
    bool requested;       /* its whole request (headers) has come: it is being answered */
    bool suspended;
    bool cut;
};

struct http_server {
    struct MHD_Daemon *daemon;
    http_handler_fn handler;
    void *ctx;
    struct http_conn conns[HTTP_CONNECTION_SLOTS];
    struct MHD_Connection *waiters[HTTP_WAITERS_MAX];
    int n_waiters;
    unsigned long accepted;
    unsigned long refused;
    bool cut_any; /* a connection was cut inside libmicrohttpd's run: run it again to close it */
};

/* Marks a connection whose headers have been seen (MHD calls the handler again for the body). */
static int seen;

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    char line[512];
    (void)cls;
    vsnprintf(line, sizeof(line), fmt, ap);
    line[strcspn(line, "\n")] = '\0';
    log_debug("http: %s", line);
}

static struct http_conn *conn_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info ? info->socket_context : NULL;
}

static void cut(struct http_server *h, struct http_conn *k)
{
    if (k->fd >= 0)
        shutdown(k->fd, SHUT_RDWR);
    k->cut = true;
    h->refused++;
    h->cut_any = true;
}

/* Over HTTP_CONNECTION_LIMIT: the oldest connection that has not sent its whole request is cut.
 * A probe sends its request with its connection and is answered as soon as it is read; a client
 * waiting for a drain (suspended) is never cut. */
static void evict_oldest(struct http_server *h)
{
    struct http_conn *victim = NULL;
    int open = 0;
    for (int i = 0; i < HTTP_CONNECTION_SLOTS; i++) {
        struct http_conn *k = &h->conns[i];
        if (!k->c || k->cut)
            continue;
        open++;
        if (!k->requested && !k->suspended && (!victim || k->opened < victim->opened))
            victim = k;
    }
    if (open <= HTTP_CONNECTION_LIMIT || !victim)
        return;
    log_debug("http: %d connections open: the oldest without a request gives way", open);
    cut(h, victim);
}

/* Keeps a slot per connection, for its deadline and its age. */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    struct http_server *h = cls;
    struct http_conn *slot = *socket_context;
    const union MHD_ConnectionInfo *info;
    if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        if (slot)
            memset(slot, 0, sizeof(*slot));
        *socket_context = NULL;
        return;
    }
    info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    for (int i = 0; i < HTTP_CONNECTION_SLOTS; i++) {
        if (h->conns[i].c == NULL) {
            h->conns[i] = (struct http_conn){.c = c,
                                             .fd = info ? info->connect_fd : -1,
                                             .opened = ++h->accepted,
                                             .deadline_ms = monotime_ms() + HTTP_CONNECTION_DEADLINE_MS};
            *socket_context = &h->conns[i];
            evict_oldest(h);
            return;
        }
    }
    /* No slot: cannot happen while the daemon's own limit is HTTP_CONNECTION_SLOTS. */
    if (info)
        shutdown(info->connect_fd, SHUT_RDWR);
    h->refused++;
}

static enum MHD_Result queue_answer(struct MHD_Connection *c, const struct http_answer *a)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(a->body), (void *)a->body, MHD_RESPMEM_MUST_COPY);
    enum MHD_Result rc;
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, a->content_type);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    if (a->proof[0])
        MHD_add_response_header(r, DRAINPROOF_PROOF_HEADER, a->proof);
    rc = MHD_queue_response(c, (unsigned int)a->status, r);
    MHD_destroy_response(r);
    return rc;
}

static void plain(struct http_answer *a, int status, const char *text)
{
    a->status = status;
    a->content_type = "text/plain; charset=utf-8";
    snprintf(a->body, sizeof(a->body), "%s\n", text);
}

/* A body, announced by its length or by chunked encoding: no handler takes one. */
static bool has_body(struct MHD_Connection *c)
{
    const char *len = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    return MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING) != NULL ||
           (len && strcmp(len, "0") != 0);
}

static enum MHD_Result suspend(struct http_server *h, struct MHD_Connection *c, struct http_conn *slot,
                               struct http_answer *a)
{
    if (h->n_waiters >= HTTP_WAITERS_MAX || !slot) {
        plain(a, 429, "too many clients waiting already: ask again");
        return queue_answer(c, a);
    }
    h->waiters[h->n_waiters++] = c;
    slot->suspended = true;
    MHD_suspend_connection(c);
    return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    struct http_server *h = cls;
    struct http_conn *slot = conn_of(c);
    struct http_request req = {method, url, false,
                               MHD_lookup_connection_value(c, MHD_HEADER_KIND, DRAINPROOF_NONCE_HEADER),
                               MHD_lookup_connection_value(c, MHD_HEADER_KIND, DRAINCLIENT_RAY_START_HEADER)};
    struct http_answer a = {.proof = ""};
    bool wait = false;
    (void)version;
    (void)upload_data;
    if (*con_cls == NULL) {
        *con_cls = &seen;
        if (slot)
            slot->requested = true;
        if (!has_body(c))
            return MHD_YES; /* called again once the (empty) request is complete */
        h->refused++;
        plain(&a, 413, "no endpoint takes a request body");
        return queue_answer(c, &a);
    }
    if (*upload_data_size > 0)
        return MHD_NO; /* a body after all (none was announced): drop the connection */
    if (slot && slot->suspended) {
        req.resumed = true;
        slot->suspended = false;
        slot->deadline_ms = monotime_ms() + HTTP_CONNECTION_DEADLINE_MS;
    }
    h->handler(h->ctx, &req, &a, &wait);
    if (wait)
        return suspend(h, c, slot, &a);
    return queue_answer(c, &a);
}

/* After libmicrohttpd could not listen: whether the port is in use (EADDRINUSE from a bind of our
 * own), told apart from an address or port not allowed, so that the caller can go on without it. */
static bool port_in_use(const struct sockaddr_in *sa)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1, e;
    if (fd < 0)
        return false;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)); /* as libmicrohttpd does */
    e = bind(fd, (const struct sockaddr *)sa, sizeof(*sa)) < 0 ? errno : 0;
    close(fd);
    return e == EADDRINUSE;
}

struct http_server *http_start(const char *addr, int port, http_handler_fn handler, void *ctx, bool *in_use,
                               struct errbuf *err)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    struct http_server *h;
    sa.sin_addr.s_addr = htonl(INADDR_ANY);
    if (addr && inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
        errbuf_set(err, "%.60s: not an IPv4 address to listen on", addr);
        return NULL;
    }
    h = calloc(1, sizeof(*h));
    if (!h) {
        errbuf_set(err, "out of memory");
        return NULL;
    }
    h->handler = handler;
    h->ctx = ctx;
    h->daemon = MHD_start_daemon(MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG, (uint16_t)port, NULL,
                                 NULL, on_request, h, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                                 MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, NULL, MHD_OPTION_NOTIFY_CONNECTION,
                                 on_connection, h, MHD_OPTION_CONNECTION_LIMIT, (unsigned int)HTTP_CONNECTION_SLOTS,
                                 MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_CONNECTION_MEMORY_BYTES,
                                 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)HTTP_IDLE_TIMEOUT_S, MHD_OPTION_END);
    if (!h->daemon) {
        bool taken = port > 0 && port_in_use(&sa);
        free(h);
        if (in_use)
            *in_use = taken;
        errbuf_set(err, "could not listen on %s:%d: %s", addr ? addr : "0.0.0.0", port,
                   taken ? "another process holds the port" : "in use, or not allowed");
        return NULL;
    }
    return h;
}

int http_bound_port(const struct http_server *h)
{
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : -1;
}

int http_fd(const struct http_server *h)
{
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_EPOLL_FD);
    return info ? info->epoll_fd : -1;
}

/* Connections past their deadline are shut down; libmicrohttpd reads the end and closes them. */
static void cut_late(struct http_server *h, long now_ms)
{
    for (int i = 0; i < HTTP_CONNECTION_SLOTS; i++) {
        struct http_conn *k = &h->conns[i];
        if (!k->c || k->suspended || k->cut || now_ms < k->deadline_ms)
            continue;
        log_debug("http: a connection open for %d ms is cut", HTTP_CONNECTION_DEADLINE_MS);
        cut(h, k);
    }
}

void http_run(struct http_server *h)
{
    h->cut_any = false;
    MHD_run(h->daemon);
    cut_late(h, monotime_ms());
    if (h->cut_any)
        MHD_run(h->daemon); /* closes what was cut, so that its slot is free again */
}

long http_timeout_ms(struct http_server *h)
{
    MHD_UNSIGNED_LONG_LONG mhd_ms;
    long now_ms = monotime_ms(), ms = -1;
    if (MHD_get_timeout(h->daemon, &mhd_ms) == MHD_YES)
        ms = mhd_ms > HTTP_MAX_SLEEP_MS ? HTTP_MAX_SLEEP_MS : (long)mhd_ms;
    for (int i = 0; i < HTTP_CONNECTION_SLOTS; i++) {
        const struct http_conn *k = &h->conns[i];
        long left;
        if (!k->c || k->suspended || k->cut)
            continue;
        left = k->deadline_ms > now_ms ? k->deadline_ms - now_ms : 0;
        if (ms < 0 || left < ms)
            ms = left;
    }
    return ms;
}

void http_resume_waiters(struct http_server *h)
{
    for (int i = 0; i < h->n_waiters; i++)
        MHD_resume_connection(h->waiters[i]);
    h->n_waiters = 0;
    MHD_run(h->daemon);
}

unsigned long http_refused(const struct http_server *h)
{
    return h->refused;
}

void http_stop(struct http_server *h)
{
    if (!h)
        return;
    /* Suspended connections must be resumed before the daemon can stop. */
    http_resume_waiters(h);
    MHD_stop_daemon(h->daemon);
    free(h);
}
