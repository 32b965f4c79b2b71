/* Formatting and copying into fixed buffers with a cut the caller means (text.h says why this is
 * not snprintf at each call site). Nothing here allocates. */
#include "text.h"

#include <stdarg.h>
#include <stdbool.h>
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

size_t text_printable(char *dst, size_t cap, const char *src)
{
    static const char digits[] = "0123456789abcdef";
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)src; *p; p++) {
        bool plain = *p >= 0x20 && *p < 0x7f;
        if (o + (plain ? 1 : 4) >= cap)
            break;
        if (plain) {
            dst[o++] = (char)*p;
            continue;
        }
        dst[o++] = '\\';
        dst[o++] = 'x';
        dst[o++] = digits[*p >> 4];
        dst[o++] = digits[*p & 15];
    }
    dst[o] = '\0';
    return o;
}
