/* libFuzzer target: lib/net/resolvconf.c on any /etc/resolv.conf. The parse never fails; its tables
 * must stay within their bounds, each entry a NUL-terminated word, ndots within 0..15, and the
 * cluster domain (when found) the tail of a search entry. */
#include <ctype.h>
#include <string.h>

#include "fuzz.h"
#include "resolvconf.h"

static int word_ok(const char *s, size_t cap)
{
    if (!fuzz_terminated(s, cap) || s[0] == '\0')
        return 0;
    for (; *s; s++) {
        if (isspace((unsigned char)*s))
            return 0;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_strndup(data, size);
    struct resolvconf *rc = malloc(sizeof(*rc));
    const char *domain;

    if (!rc)
        abort();
    resolvconf_parse(text, rc);
    if (rc->nsearch > RESOLVCONF_SEARCH_MAX || rc->nnameservers > RESOLVCONF_NAMESERVERS_MAX || rc->ndots < 0 ||
        rc->ndots > 15)
        __builtin_trap();
    for (size_t i = 0; i < rc->nsearch; i++) {
        if (!word_ok(rc->search[i], sizeof(rc->search[i])))
            __builtin_trap();
    }
    for (size_t i = 0; i < rc->nnameservers; i++) {
        if (!word_ok(rc->nameservers[i], sizeof(rc->nameservers[i])))
            __builtin_trap();
    }
    domain = resolvconf_cluster_domain(rc);
    if (domain) {
        int inside = 0;
        for (size_t i = 0; i < rc->nsearch; i++)
            inside |= domain == rc->search[i] + 4;
        if (!inside || domain[0] == '\0')
            __builtin_trap();
    }
    free(rc);
    free(text);
    return 0;
}
