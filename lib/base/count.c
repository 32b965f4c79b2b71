/* Parsing the decimal strings Kubernetes controllers put in variables and labels. Strict on
 * purpose: what they write is plain digits, so anything else was written by someone else and is
 * reported, never read as a prefix. */
#include "count.h"

#include "number.h"

/* COUNT_MAX has 7 digits; a longer string is out of range whatever its value. */
#define COUNT_DIGITS_MAX 7

int count_parse(const char *text, size_t len, long *out)
{
    if (len > COUNT_DIGITS_MAX)
        return -1;
    return number_parse(text, len, 0, COUNT_MAX, out);
}
