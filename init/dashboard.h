/* HTTP/1.1 to a Ray dashboard (lib/net/httpc.c: no proxy, no TLS): one request at a time, every reply
 * bounded. The submitter execs nothing, so it talks to the dashboard itself rather than through
 * the prober. */
#ifndef RAYBOOT_INIT_DASHBOARD_H
#define RAYBOOT_INIT_DASHBOARD_H

#include <stdbool.h>
#include <stddef.h>

#include "errbuf.h"
#include "httpc.h"
#include "rayauth.h"

/* An http:// URL with a host name, a port and a path prefix fits with room to spare. */
#define DASHBOARD_BASE_MAX_BYTES 512

struct dashboard {
    struct httpc http;
    char base[DASHBOARD_BASE_MAX_BYTES]; /* http://host:port, no trailing slash */
    /* "authorization: Bearer <token>" with every request (Ray's dashboard in token mode refuses
     * even /api/version without it), or "": zeroed by dashboard_free. */
    char auth_header[RAYAUTH_HEADER_MAX_BYTES];
};

/* base_url: http://HOST[:PORT][/]. `what` names where it came from, for the message. */
int dashboard_init(struct dashboard *d, const char *base_url, const char *what, struct errbuf *err);
/* The URL check and normalisation dashboard_init does, alone (pure, so it can be fuzzed): base gets
 * base_url without trailing slashes. */
int dashboard_base_parse(const char *base_url, const char *what, char base[DASHBOARD_BASE_MAX_BYTES],
                         struct errbuf *err);
void dashboard_free(struct dashboard *d);

/* One request (json_body: a POST's body, or NULL for a GET). 0 with the reply, whatever its
 * status (httpc_reply_free); a negative enum httpc_failure when there was no HTTP answer
 * (refused, timeout, HTTPC_TOO_LARGE past max_bytes, ...), with the message. */
int dashboard_call(struct dashboard *d, const char *method, const char *path, const char *json_body, size_t max_bytes,
                   long timeout_ms, struct httpc_reply *out, struct errbuf *err);

/* The reply body as one printable line, cut, for messages (Ray answers errors in plain text,
 * often a Python traceback: its last line says what was wrong). */
void dashboard_reply_summary(const struct httpc_reply *r, char *out, size_t cap);

#endif
