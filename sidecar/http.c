/* libmicrohttpd in external-epoll mode: its epoll fd sits in the sidecar's loop, and the loop
 * calls MHD_run. Request bodies are read and dropped (no endpoint takes one); header memory is
 * capped, so huge headers are refused by the library; idle and slow clients are timed out. */
#include "http.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "log.h"

/* Probes, a preStop hook and a metrics scraper: a handful of clients at most. */
#define HTTP_CONNECTION_LIMIT 32
/* Request line and headers together; a kubelet probe sends a few hundred bytes. */
#define HTTP_CONNECTION_MEMORY_BYTES 8192
/* An idle or slow client is dropped after this (a suspended /drain is not idle). */
#define HTTP_CONNECTION_TIMEOUT_S 10

struct http_server {
    struct MHD_Daemon *daemon;
    struct sidecar *sidecar;
    struct MHD_Connection *waiters[HTTP_CONNECTION_LIMIT];
    int n_waiters;
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

static enum MHD_Result queue_answer(struct MHD_Connection *c, const struct http_answer *a)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(a->body), (void *)a->body, MHD_RESPMEM_MUST_COPY);
    enum MHD_Result rc;
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, a->content_type);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    rc = MHD_queue_response(c, (unsigned int)a->status, r);
    MHD_destroy_response(r);
    return rc;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    struct http_server *h = cls;
    struct http_answer a;
    bool suspend = false;
    (void)version;
    (void)upload_data;
    if (*con_cls == NULL) {
        *con_cls = &seen;
        return MHD_YES;
    }
    if (*upload_data_size > 0) {
        *upload_data_size = 0; /* dropped: no endpoint reads a body */
        return MHD_YES;
    }
    endpoints_answer(h->sidecar, method, url, MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "deadline"),
                     &a, &suspend);
    if (suspend) {
        if (h->n_waiters < HTTP_CONNECTION_LIMIT) {
            h->waiters[h->n_waiters++] = c;
            MHD_suspend_connection(c);
            return MHD_YES;
        }
        a.status = 503;
        a.content_type = "text/plain";
        snprintf(a.body, sizeof(a.body), "too many clients waiting for the drain\n");
    }
    return queue_answer(c, &a);
}

struct http_server *http_start(int port, struct sidecar *s, struct errbuf *err)
{
    struct http_server *h = calloc(1, sizeof(*h));
    if (!h) {
        errbuf_set(err, "out of memory");
        return NULL;
    }
    h->sidecar = s;
    h->daemon = MHD_start_daemon(MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG, (uint16_t)port, NULL,
                                 NULL, on_request, h, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, NULL,
                                 MHD_OPTION_CONNECTION_LIMIT, (unsigned int)HTTP_CONNECTION_LIMIT,
                                 MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_CONNECTION_MEMORY_BYTES,
                                 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)HTTP_CONNECTION_TIMEOUT_S,
                                 MHD_OPTION_END);
    if (!h->daemon) {
        free(h);
        errbuf_set(err, "could not listen on port %d (RAYBOOT_SIDECAR_PORT): in use, or not allowed", port);
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

void http_run(struct http_server *h)
{
    MHD_run(h->daemon);
}

long http_timeout_ms(struct http_server *h)
{
    MHD_UNSIGNED_LONG_LONG ms;
    if (MHD_get_timeout(h->daemon, &ms) != MHD_YES)
        return -1;
    return ms > 60000 ? 60000 : (long)ms;
}

void http_resume_waiters(struct http_server *h)
{
    for (int i = 0; i < h->n_waiters; i++)
        MHD_resume_connection(h->waiters[i]);
    h->n_waiters = 0;
    MHD_run(h->daemon);
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
