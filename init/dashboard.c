/* The dashboard client: URL checks, one libcurl handle, bounded bodies. What to ask and what the
 * answers mean is submit.c's and lib/jobsapi.c's. */
#include "dashboard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "curlbody.h"

#define DASHBOARD_CONNECT_TIMEOUT_MS 2000

int dashboard_base_parse(const char *base_url, const char *what, char base[DASHBOARD_BASE_MAX_BYTES],
                         struct errbuf *err)
{
    size_t len = strlen(base_url);
    if (strncmp(base_url, "http://", 7) != 0 || len <= 7 || len >= DASHBOARD_BASE_MAX_BYTES ||
        strcspn(base_url + 7, "/?#@ \t\r\n") == 0)
        return errbuf_set(err, "%s=%.200s: expected http://HOST:PORT (the dashboard, e.g. http://head:8265; "
                               "https is not supported)", what, base_url);
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
    if (curl_global_init(CURL_GLOBAL_NOTHING) != CURLE_OK || !(d->curl = curl_easy_init()))
        return errbuf_set(err, "libcurl failed to initialise");
    return 0;
}

void dashboard_free(struct dashboard *d)
{
    if (d->curl)
        curl_easy_cleanup(d->curl);
    d->curl = NULL;
}

int dashboard_call(struct dashboard *d, const char *method, const char *path, const char *json_body,
                   size_t max_bytes, long timeout_ms, struct dashboard_reply *out, struct errbuf *err)
{
    CURL *curl = d->curl;
    struct curl_slist *headers = NULL;
    struct curl_body sink = {NULL, 0, max_bytes, false};
    char url[1024];
    CURLcode rc;

    memset(out, 0, sizeof(*out));
    if (snprintf(url, sizeof(url), "%s%s", d->base, path) >= (int)sizeof(url))
        return errbuf_set(err, "URL too long");
    curl_easy_reset(curl);
    headers = curl_slist_append(headers, "Content-Type: application/json");
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http");
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
    if (json_body) {
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, json_body);
        curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    }
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, (long)DASHBOARD_CONNECT_TIMEOUT_MS);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, curl_body_write);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
    curl_easy_setopt(curl, CURLOPT_USERAGENT, "rayboot");
    rc = curl_easy_perform(curl);
    curl_slist_free_all(headers);
    if (rc != CURLE_OK) {
        free(sink.buf);
        if (sink.too_big)
            return errbuf_set(err, "%s %s: the reply is larger than %zu bytes", method, path, max_bytes);
        return errbuf_set(err, "%s %s%s: %s", method, d->base, path, curl_easy_strerror(rc));
    }
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &out->status);
    out->body = sink.buf ? sink.buf : calloc(1, 1);
    out->len = sink.len;
    if (!out->body)
        return errbuf_set(err, "out of memory");
    return 0;
}

void dashboard_reply_free(struct dashboard_reply *r)
{
    free(r->body);
    r->body = NULL;
    r->len = 0;
}

void dashboard_reply_summary(const struct dashboard_reply *r, char *out, size_t cap)
{
    const char *start = r->body ? r->body : "", *end = start + r->len;
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
