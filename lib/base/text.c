/* Formatting and copying into fixed buffers with a cut the caller means (text.h says why this is
 * not snprintf at each call site). Nothing here allocates. */
#include "text.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int text_format(char *dst, size_t cap, const char *fmt, ...)
{
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(dst, cap, fmt, ap);
    va_end(ap);
    return n;
}

size_t text_copy(char *dst, size_t cap, const char *src, size_t len)
{
    size_t n = strnlen(src, len < cap - 1 ? len : cap - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
    return n;
}
