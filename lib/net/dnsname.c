/* Name syntax checks; resolving names is lib/net/dns.c's job. */
#include "dnsname.h"

#include <ctype.h>
#include <string.h>

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

int dnsname_label_at(const char *name, int n, char *out, size_t cap)
{
    const char *start = name;
    for (int i = 0; i < n; i++) {
        start = strchr(start, '.');
        if (!start)
            return -1;
        start++;
    }
    size_t len = strcspn(start, ".");
    if (len == 0 || len >= cap)
        return -1;
    memcpy(out, start, len);
    out[len] = '\0';
    return 0;
}
