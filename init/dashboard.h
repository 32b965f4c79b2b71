/* HTTP/1.1 to a Ray dashboard (libcurl, no proxy, no TLS): one request at a time, every reply
 * bounded. The submitter execs nothing, so it talks to the dashboard itself rather than through
 * the prober. */
#ifndef RAYBOOT_INIT_DASHBOARD_H
#define RAYBOOT_INIT_DASHBOARD_H

#include <stdbool.h>
#include <stddef.h>

#include "errbuf.h"

/* An http:// URL with a host name, a port and a path prefix fits with room to spare. */
#define DASHBOARD_BASE_MAX_BYTES 512

struct dashboard {
    void *curl;
    char base[DASHBOARD_BASE_MAX_BYTES]; /* http://host:port, no trailing slash */
};

struct dashboard_reply {
    long status; /* HTTP status */
    char *body;  /* NUL-terminated, len bytes */
    size_t len;
};

/* base_url: http://HOST[:PORT][/]. `what` names where it came from, for the message. */
int dashboard_init(struct dashboard *d, const char *base_url, const char *what, struct errbuf *err);
/* The URL check and normalisation dashboard_init does, alone (pure, so it can be fuzzed): base gets
 * base_url without trailing slashes. */
int dashboard_base_parse(const char *base_url, const char *what, char base[DASHBOARD_BASE_MAX_BYTES],
                         struct errbuf *err);
void dashboard_free(struct dashboard *d);

/* One request. -1 with a message when there was no HTTP answer (refused, timeout, reply larger
 * than max_bytes); 0 with the reply otherwise, whatever its status. */
int dashboard_call(struct dashboard *d, const char *method, const char *path, const char *json_body,
                   size_t max_bytes, long timeout_ms, struct dashboard_reply *out, struct errbuf *err);
void dashboard_reply_free(struct dashboard_reply *r);

/* The reply body as one printable line, cut, for messages (Ray answers errors in plain text,
 * often a Python traceback: its last line says what was wrong). */
void dashboard_reply_summary(const struct dashboard_reply *r, char *out, size_t cap);

#endif
