/* RAYBOOT_NOFILE and the soft limit it asks for; applying it is init/run.c's, just before Ray
 * and the command are started, so both inherit it. */
#include "nofile.h"

#include <string.h>

#include "env.h"

int nofile_parse(const char *const *envp, long *target, struct errbuf *err)
{
    const char *v = env_lookup_nonempty(envp, "RAYBOOT_NOFILE");
    *target = NOFILE_DEFAULT;
    if (!v)
        return 0;
    if (strcmp(v, "keep") == 0) {
        *target = 0;
        return 0;
    }
    if (env_parse_count(v, NOFILE_MAX, target) < 0)
        return errbuf_set(
            err,
            "RAYBOOT_NOFILE=%.40s: expected a number of open files, 1 to %ld (0 or keep: leave the limit as it is)", v,
            NOFILE_MAX);
    return 0;
}

unsigned long long nofile_choose(long target, unsigned long long soft, unsigned long long hard, int *clamped)
{
    unsigned long long want = (unsigned long long)target;
    *clamped = 0;
    if (target <= 0 || soft >= want)
        return soft;
    if (hard < want) {
        *clamped = 1;
        return hard > soft ? hard : soft;
    }
    return want;
}
