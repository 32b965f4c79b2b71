/* Parsing the decimal strings Kubernetes controllers put in variables and labels. Strict on
 * purpose: what they write is plain digits, so anything else was written by someone else and is
 * reported, never read as a prefix. */
#include "count.h"

/* COUNT_MAX has 7 digits; a longer string is out of range whatever its value. */
#define COUNT_DIGITS_MAX 7

int count_parse(const char *text, size_t len, long *out)
{
    long v = 0;
    if (len == 0 || len > COUNT_DIGITS_MAX)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (text[i] < '0' || text[i] > '9')
            return -1;
        v = v * 10 + (text[i] - '0');
    }
    if (v > COUNT_MAX)
        return -1;
    *out = v;
    return 0;
}
