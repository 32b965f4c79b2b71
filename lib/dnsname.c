/* Name syntax checks; resolving names is lib/dns.c's job. */
#include "dnsname.h"

#include <ctype.h>

static bool label_ok(const char *s, size_t len, bool allow_upper)
{
    if (len == 0 || len > DNS_LABEL_MAX_BYTES || s[0] == '-' || s[len - 1] == '-')
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        bool ok = islower(c) || isdigit(c) || c == '-' || (allow_upper && isupper(c));
        if (!ok)
            return false;
    }
    return true;
}

bool dnsname_label_valid(const char *s, size_t len)
{
    return label_ok(s, len, false);
}

bool dnsname_valid(const char *s, size_t len)
{
    size_t start = 0;
    if (len == 0 || len > DNS_NAME_MAX_BYTES)
        return false;
    for (size_t i = 0; i <= len; i++) {
        if (i == len || s[i] == '.') {
            if (!label_ok(s + start, i - start, true))
                return false;
            start = i + 1;
        }
    }
    return true;
}
