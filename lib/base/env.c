/* Environment lookups; the kernel already bounds each string to 128 KiB (MAX_ARG_STRLEN). */
#include "env.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "number.h"

const char *env_lookup(const char *const *envp, const char *name)
{
    size_t n = strlen(name);
    for (; envp && *envp; envp++) {
        if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
            return *envp + n + 1;
    }
    return NULL;
}

const char *env_lookup_nonempty(const char *const *envp, const char *name)
{
    const char *v = env_lookup(envp, name);
    return (v && *v) ? v : NULL;
}

const char *env_exec_path(const char *const *envp)
{
    const char *path = env_lookup(envp, "PATH");
    return path ? path : "/usr/local/bin:/usr/bin:/bin";
}

static bool replaced_by(const char *entry, const struct strv *add)
{
    size_t key_len = strcspn(entry, "=");
    for (size_t i = 0; i < add->len; i++) {
        if (strncmp(add->items[i], entry, key_len + 1) == 0)
            return true;
    }
    return false;
}

int env_merge(const char *const *envp, const struct strv *add, struct strv *out)
{
    for (; envp && *envp; envp++) {
        if (!replaced_by(*envp, add) && strv_push(out, *envp) < 0)
            return -1;
    }
    for (size_t i = 0; i < add->len; i++) {
        if (strv_push(out, add->items[i]) < 0)
            return -1;
    }
    return 0;
}

int env_parse_count(const char *text, long max, long *out)
{
    return number_parse_trimmed(text, 0, max, out);
}
