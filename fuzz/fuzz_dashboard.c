/* libFuzzer target: init/dashboard.c's pure parts: the dashboard URL check (--address,
 * RAYBOOT_DASHBOARD_ADDRESS) and the one-line summary of a reply body that rayboot logs. Input:
 * the URL on the first line, the reply body after it. A URL that passes must be http://HOST...
 * without query, user or blanks and without a trailing slash; a summary must be printable ASCII on
 * one line, within its buffer. */
#include <string.h>

#include "dashboard.h"
#include "fuzz.h"

/* As submit.c sizes its summaries. */
#define FUZZ_SUMMARY_BYTES 512

static void check_base(const char *base)
{
    size_t len = strnlen(base, DASHBOARD_BASE_MAX_BYTES);
    if (len == DASHBOARD_BASE_MAX_BYTES || len <= 7 || strncmp(base, "http://", 7) != 0 ||
        strpbrk(base + 7, "?#@ \t\r\n") || base[len - 1] == '/' || base[7] == '/')
        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    size_t url_len = nl ? (size_t)(nl - data) : size;
    char *url = fuzz_strndup(data, url_len);
    char base[DASHBOARD_BASE_MAX_BYTES], summary[FUZZ_SUMMARY_BYTES];
    struct httpc_reply reply;
    struct errbuf err;

    if (dashboard_base_parse(url, "RAYBOOT_DASHBOARD_ADDRESS", base, &err) == 0)
        check_base(base);
    else if (!fuzz_terminated(err.msg, sizeof(err.msg)))
        __builtin_trap();
    /* The body as dashboard_call hands it over: len bytes and a NUL (any byte may be inside). */
    memset(&reply, 0, sizeof(reply));
    reply.status = 500;
    reply.body.len = nl ? size - url_len - 1 : 0;
    reply.body.buf = malloc(reply.body.len + 1);
    if (!reply.body.buf)
        abort();
    if (reply.body.len)
        memcpy(reply.body.buf, nl + 1, reply.body.len);
    reply.body.buf[reply.body.len] = '\0';
    dashboard_reply_summary(&reply, summary, sizeof(summary));
    if (!fuzz_one_line(summary, sizeof(summary)))
        __builtin_trap();
    for (const char *c = summary; *c; c++) {
        if (*c < 0x20 || *c >= 0x7f)
            __builtin_trap();
    }
    httpc_reply_free(&reply);
    free(url);
    return 0;
}
