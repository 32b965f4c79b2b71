/* Lower-case hex (hex.h). Upper case is refused on purpose: a tag has one spelling, so two
 * strings that compare unequal are never the same tag. */
#include "hex.h"

void hex_encode(const uint8_t *d, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[d[i] >> 4];
        out[2 * i + 1] = digits[d[i] & 15];
    }
}

int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

int hex_decode(const char *s, size_t n, uint8_t *d)
{
    for (size_t i = 0; i < n; i++) {
        int hi = hex_digit(s[2 * i]), lo = hex_digit(s[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        d[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}
