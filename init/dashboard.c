/* The dashboard client: URL checks, then requests through lib/net/httpc.c with the base URL in front.
 * What to ask and what the answers mean is submit.c's and jobsapi.c's. */
#include "dashboard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

/* A dashboard that is up accepts at once; past this the SYN was dropped or nothing listens. */
#define DASHBOARD_CONNECT_TIMEOUT_MS 2000

/* What libcurl's URL parser (the one that will connect) says of URL: 0 when it is http://HOST or
 * http://HOST:PORT with a port from 1 to 65535 and perhaps a path, without user, query or
 * fragment; else -1 and *why. Only the URL API, no request: the same in the fuzzer. */
static int url_refused(const char *url, const char **why)
{
    CURLU *u = curl_url();
    char *part = NULL;
    CURLUcode rc;
    int refused = -1;
    if (!u) {
        *why = "out of memory";
        return -1;
    }
    rc = curl_url_set(u, CURLUPART_URL, url, 0);
    if (rc != CURLUE_OK)
        *why = curl_url_strerror(rc); /* a port past 65535, a bad host, blanks... */
    else if (curl_url_get(u, CURLUPART_USER, &part, 0) != CURLUE_NO_USER)
        *why = "a user name is not expected";
    else if (curl_url_get(u, CURLUPART_QUERY, &part, 0) != CURLUE_NO_QUERY)
        *why = "a query is not expected";
    else if (curl_url_get(u, CURLUPART_FRAGMENT, &part, 0) != CURLUE_NO_FRAGMENT)
        *why = "a fragment is not expected";
    else if (curl_url_get(u, CURLUPART_PORT, &part, CURLU_DEFAULT_PORT) != CURLUE_OK || strcmp(part, "0") == 0)
        *why = "port 0 cannot be connected to";
    else
        refused = 0;
    curl_free(part);
    curl_url_cleanup(u);
    return refused;
}

int dashboard_base_parse(const char *base_url, const char *what, char base[DASHBOARD_BASE_MAX_BYTES],
                         struct errbuf *err)
{
    size_t len = strlen(base_url);
    const char *why = NULL;
    if (strncmp(base_url, "http://", 7) != 0 || len <= 7 || len >= DASHBOARD_BASE_MAX_BYTES)
        return errbuf_set(err,
                          "%s=%.200s: expected http://HOST:PORT (the dashboard, e.g. http://head:8265; "
                          "https is not supported)",
                          what, base_url);
    if (url_refused(base_url, &why) < 0)
        return errbuf_set(err, "%s=%.200s: %s (expected http://HOST:PORT, e.g. http://head:8265)", what, base_url, why);
    /* libcurl reads http:///head as http://head; the URL as written has no host, and is refused. */
    if (base_url[7] == '/')
        return errbuf_set(err, "%s=%.200s: no host after http:// (expected http://HOST:PORT, e.g. http://head:8265)",
                          what, base_url);
    if (strpbrk(base_url + 7, "?#@")) /* even an empty query or fragment: the paths are appended */
        return errbuf_set(err, "%s=%.200s: expected http://HOST:PORT, without query, fragment or user", what, base_url);
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
