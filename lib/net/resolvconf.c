/* resolv.conf parsing. Resolving with it is lib/net/dns.c's job. */
#include "resolvconf.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lines.h"
#include "number.h"

/* glibc and musl cap ndots at 15: more is read as 15. */
#define RESOLVCONF_NDOTS_MAX 15

/* A word of a line: [start, start+len). */
struct word {
    const char *start;
    size_t len;
};

/* Any blank separates words, not only space and tab: a word ends at the first isspace() byte,
 * so skipping less than that returned empty words forever on a line with '\r' (a CRLF file) or
 * '\f' in it (found by fuzz/fuzz_resolvconf.c: rayboot hung at start-up). */
static bool word_next(const char **p, const char *end, struct word *w)
{
    while (*p < end && isspace((unsigned char)**p))
        (*p)++;
    if (*p >= end || **p == '#' || **p == ';')
        return false;
    w->start = *p;
    while (*p < end && !isspace((unsigned char)**p))
        (*p)++;
    w->len = (size_t)(*p - w->start);
    return true;
}

static bool word_is(const struct word *w, const char *s)
{
    return w->len == strlen(s) && memcmp(w->start, s, w->len) == 0;
}

static void parse_search(const char **p, const char *end, struct resolvconf *rc)
{
    struct word w;
    rc->nsearch = 0; /* the last search line wins, as in resolvers */
    while (word_next(p, end, &w) && rc->nsearch < RESOLVCONF_SEARCH_MAX) {
        size_t len = w.len;
        if (len > 1 && w.start[len - 1] == '.')
            len--;
        if (len > DNS_NAME_MAX_BYTES)
            continue;
        memcpy(rc->search[rc->nsearch], w.start, len);
        rc->search[rc->nsearch][len] = '\0';
        rc->nsearch++;
    }
}

static void parse_nameserver(const char **p, const char *end, struct resolvconf *rc)
{
    struct word w;
    if (!word_next(p, end, &w) || w.len >= RESOLVCONF_ADDR_MAX_BYTES || rc->nnameservers >= RESOLVCONF_NAMESERVERS_MAX)
        return;
    memcpy(rc->nameservers[rc->nnameservers], w.start, w.len);
    rc->nameservers[rc->nnameservers][w.len] = '\0';
    rc->nnameservers++;
}

static void parse_options(const char **p, const char *end, struct resolvconf *rc)
{
    struct word w;
    while (word_next(p, end, &w)) {
        if (w.len > 6 && w.len < 10 && memcmp(w.start, "ndots:", 6) == 0) {
            /* Its leading digits, as glibc reads them ("ndots:5x" is 5). */
            const char *digits = w.start + 6;
            size_t ndigits = 0;
            long n;
            while (ndigits < w.len - 6 && isdigit((unsigned char)digits[ndigits]))
                ndigits++;
            if (number_parse(digits, ndigits, 0, 999, &n) == 0)
                rc->ndots = n > RESOLVCONF_NDOTS_MAX ? RESOLVCONF_NDOTS_MAX : (int)n;
        }
    }
}

void resolvconf_parse(const char *text, struct resolvconf *rc)
{
    const char *cursor = text, *line, *end;
    memset(rc, 0, sizeof(*rc));
    rc->ndots = 1;
    while (lines_next(&cursor, &line, &end)) {
        const char *p = line;
        struct word key;
        if (word_next(&p, end, &key)) {
            if (word_is(&key, "search") || word_is(&key, "domain"))
                parse_search(&p, end, rc);
            else if (word_is(&key, "nameserver"))
                parse_nameserver(&p, end, rc);
            else if (word_is(&key, "options"))
                parse_options(&p, end, rc);
        }
    }
}

const char *resolvconf_cluster_domain(const struct resolvconf *rc)
{
    for (size_t i = 0; i < rc->nsearch; i++) {
        if (strncmp(rc->search[i], "svc.", 4) == 0 && rc->search[i][4] != '\0')
            return rc->search[i] + 4;
    }
    return NULL;
}
