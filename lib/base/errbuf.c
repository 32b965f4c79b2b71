/* Error messages for callers: formatting only, no I/O. */
#include "errbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int errbuf_set(struct errbuf *err, const char *fmt, ...)
{
    va_list ap;
    if (!err)
        return -1;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    return -1;
}

/* Appends src to dst (holding len bytes) without overflowing cap; returns the new length. */
static size_t append_clipped(char *dst, size_t len, size_t cap, const char *src)
{
    size_t n = strlen(src);
    if (len + 1 >= cap)
        return len;
    if (n > cap - 1 - len)
        n = cap - 1 - len;
    memcpy(dst + len, src, n);
    dst[len + n] = '\0';
    return len + n;
}

int errbuf_prefix(struct errbuf *err, const char *fmt, ...)
{
    char old[ERRBUF_MAX_BYTES];
    size_t len;
    int n;
    va_list ap;
    if (!err)
        return -1;
    memcpy(old, err->msg, sizeof(old));
    old[sizeof(old) - 1] = '\0';
    va_start(ap, fmt);
    n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    len = n < 0 ? 0 : ((size_t)n < sizeof(err->msg) ? (size_t)n : sizeof(err->msg) - 1);
    len = append_clipped(err->msg, len, sizeof(err->msg), ": ");
    append_clipped(err->msg, len, sizeof(err->msg), old);
    return -1;
}
