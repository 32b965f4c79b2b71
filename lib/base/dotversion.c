/* MAJOR.MINOR comparison of dotted versions; what follows the minor number is not looked at. */
#include "dotversion.h"

#include <string.h>

#include "number.h"

/* The leading digits of text (at most 9) as a number, *end past them; -1 when there are none. */
static long leading_number(const char *text, const char **end)
{
    size_t len = strspn(text, "0123456789");
    long n;
    *end = text + len;
    return len > 0 && number_parse(text, len, 0, 999999999, &n) == 0 ? n : -1;
}

int dotversion_at_least(const char *version, unsigned long major, unsigned long minor)
{
    const char *end;
    long got_major = leading_number(version, &end), got_minor;
    if (got_major < 0 || *end != '.' || (got_minor = leading_number(end + 1, &end)) < 0)
        return -1;
    return (unsigned long)got_major > major || ((unsigned long)got_major == major && (unsigned long)got_minor >= minor)
               ? 1
               : 0;
}
