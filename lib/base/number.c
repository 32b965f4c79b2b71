/* Decimal integers, strictly: whole strings of digits in a caller's range. Signs, blanks inside,
 * a prefix that parses and a tail that does not: each is refused, never read as a number. strtol
 * is not used: it takes leading blanks and signs, stops silently at the first other byte, and
 * needs errno to see overflow. */
#include "number.h"

#include <ctype.h>
#include <string.h>

int number_parse(const char *text, size_t len, long min, long max, long *out)
{
    long v = 0;
    if (len == 0)
        return -1;
    for (size_t i = 0; i < len; i++) {
        long d = text[i] - '0';
        if (text[i] < '0' || text[i] > '9')
            return -1;
        if (d > max || v > (max - d) / 10)
            return -1; /* past max, and this way never past LONG_MAX */
        v = v * 10 + d;
    }
    if (v < min)
        return -1;
    *out = v;
    return 0;
}

int number_parse_trimmed(const char *text, long min, long max, long *out)
{
    size_t len;
    while (isspace((unsigned char)*text))
        text++;
    len = strlen(text);
    while (len > 0 && isspace((unsigned char)text[len - 1]))
        len--;
    return number_parse(text, len, min, max, out);
}

/* The decimals of a fraction (len digits) as milliseconds: the first three, the rest dropped. */
static int fraction_millis(const char *text, size_t len, long *ms)
{
    long v = 0, scale = 100;
    for (size_t i = 0; i < len; i++) {
        if (text[i] < '0' || text[i] > '9')
            return -1;
        v += (text[i] - '0') * scale;
        scale /= 10;
    }
    *ms = v;
    return 0;
}

int number_parse_millis(const char *text, long max_s, long *out_ms)
{
    const char *dot;
    size_t len, whole_len;
    long whole = 0, frac = 0;
    while (isspace((unsigned char)*text))
        text++;
    len = strlen(text);
    while (len > 0 && isspace((unsigned char)text[len - 1]))
        len--;
    dot = memchr(text, '.', len);
    whole_len = dot ? (size_t)(dot - text) : len;
    if (len == 0 || (dot && len == 1))
        return -1; /* nothing, or a lone '.' */
    if (whole_len > 0 && number_parse(text, whole_len, 0, max_s, &whole) < 0)
        return -1;
    if (dot && fraction_millis(dot + 1, len - whole_len - 1, &frac) < 0)
        return -1;
    if (whole == max_s && frac > 0)
        return -1;
    *out_ms = whole * 1000 + frac;
    return 0;
}
