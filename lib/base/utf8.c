/* UTF-8 well-formedness: no overlongs, no surrogates, nothing past U+10FFFF. What to do with bad
 * bytes (replace them in a plan, refuse them in a job's entrypoint) is the caller's choice. */
#include "utf8.h"

size_t utf8_sequence_length(const unsigned char *s)
{
    if (s[0] < 0x80)
        return 1;
    if (s[0] >= 0xc2 && s[0] <= 0xdf)
        return (s[1] & 0xc0) == 0x80 ? 2 : 0;
    if (s[0] >= 0xe0 && s[0] <= 0xef) {
        unsigned char lo = s[0] == 0xe0 ? 0xa0 : 0x80, hi = s[0] == 0xed ? 0x9f : 0xbf;
        return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 ? 3 : 0;
    }
    if (s[0] >= 0xf0 && s[0] <= 0xf4) {
        unsigned char lo = s[0] == 0xf0 ? 0x90 : 0x80, hi = s[0] == 0xf4 ? 0x8f : 0xbf;
        return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 && (s[3] & 0xc0) == 0x80 ? 4 : 0;
    }
    return 0;
}

long utf8_invalid_offset(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        size_t n = utf8_sequence_length(p);
        if (n == 0)
            return (long)(p - (const unsigned char *)s);
        p += n;
    }
    return -1;
}
