/* Environment lookups; the kernel already bounds each string to 128 KiB (MAX_ARG_STRLEN). */
#include "env.h"

#include <string.h>

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
