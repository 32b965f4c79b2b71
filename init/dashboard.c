/* The dashboard client: URL checks, then requests through lib/net/httpc.c with the base URL in front.
 * What to ask and what the answers mean is submit.c's and jobsapi.c's. */
#include "dashboard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A dashboard that is up accepts at once; past this the SYN was dropped or nothing listens. */
#define DASHBOARD_CONNECT_TIMEOUT_MS 2000

int dashboard_base_parse(const char *base_url, const char *what, char base[DASHBOARD_BASE_MAX_BYTES],
                         struct errbuf *err)
{
    size_t len = strlen(base_url);
    if (strncmp(base_url, "http://", 7) != 0 || len <= 7 || len >= DASHBOARD_BASE_MAX_BYTES ||
        strcspn(base_url + 7, "/?#@ \t\r\n") == 0)
        return errbuf_set(err,
                          "%s=%.200s: expected http://HOST:PORT (the dashboard, e.g. http://head:8265; "
                          "https is not supported)",
                          what, base_url);
    if (strpbrk(base_url + 7, "?#@ \t\r\n"))
        return errbuf_set(err, "%s=%.200s: expected http://HOST:PORT, without query, user or spaces", what, base_url);
    memcpy(base, base_url, len + 1);
    while (len > 7 && base[len - 1] == '/')
        base[--len] = '\0';
    return 0;
}

int dashboard_init(struct dashboard *d, const char *base_url, const char *what, struct errbuf *err)
{
    memset(d, 0, sizeof(*d));
    if (dashboard_base_parse(base_url, what, d->base, err) < 0)
        return -1;
    return httpc_init(&d->http, false, err);
}

void dashboard_free(struct dashboard *d)
{
    explicit_bzero(d->auth_header, sizeof(d->auth_header));
    httpc_free(&d->http);
}

int dashboard_call(struct dashboard *d, const char *method, const char *path, const char *json_body, size_t max_bytes,
                   long timeout_ms, struct httpc_reply *out, struct errbuf *err)
{
    const char *auth = d->auth_header[0] ? d->auth_header : NULL;
    const char *const json_headers[] = {"Content-Type: application/json", auth, NULL};
    const char *const get_headers[] = {auth, NULL};
    char url[1024];
    struct httpc_request req = {
        .method = method,
        .url = url,
        .protocol = "http",
        .version = HTTPC_HTTP_ANY,
        .headers = json_body ? json_headers : get_headers,
        .body = json_body,
        .body_len = json_body ? strlen(json_body) : 0,
        .connect_timeout_ms = DASHBOARD_CONNECT_TIMEOUT_MS,
        .timeout_ms = timeout_ms,
        .max_reply_bytes = max_bytes,
        .user_agent = "rayboot",
    };
    int rc;

    memset(out, 0, sizeof(*out));
    if (snprintf(url, sizeof(url), "%s%s", d->base, path) >= (int)sizeof(url)) {
        errbuf_set(err, "%s %s: URL too long", method, path);
        return HTTPC_OTHER;
    }
    rc = httpc_request(&d->http, &req, out, err);
    if (rc < 0)
        errbuf_prefix(err, "%s %s", method, url);
    return rc;
}

void dashboard_reply_summary(const struct httpc_reply *r, char *out, size_t cap)
{
    const char *start = r->body.buf ? r->body.buf : "", *end = start + r->body.len;
    size_t n = 0;
    /* The last non-empty line. */
    while (end > start && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
        end--;
    for (const char *c = end; c > start; c--) {
        if (c[-1] == '\n') {
            start = c;
            break;
        }
    }
    for (const char *c = start; c < end && n + 1 < cap; c++)
        out[n++] = (char)((*c >= 0x20 && *c < 0x7f) ? *c : ' ');
    if (cap)
        out[n] = '\0';
}
