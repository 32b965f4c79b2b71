/* Environment lookups in an explicit envp, so the planner is a pure function of its inputs. */
#ifndef RAYBOOT_ENV_H
#define RAYBOOT_ENV_H

#include <stddef.h>

/* Returns the value of name in envp (KEY=VALUE strings, NULL-terminated), or NULL. */
const char *env_lookup(const char *const *envp, const char *name);
/* Like env_lookup, but an empty value counts as unset. */
const char *env_lookup_nonempty(const char *const *envp, const char *name);

/* A count or index as a variable holds it: a whole decimal number in 0..max, surrounding
 * whitespace allowed. 0, or -1 when text is anything else. */
int env_parse_count(const char *text, long max, long *out);

#include "strv.h"

/* PATH as execve's lookup reads it (proc_spawn): the environment's, or the default search path
 * when it has none. */
const char *env_exec_path(const char *const *envp);

/* out = envp with each KEY=VALUE of add put in (replacing the same KEY), for a child's execve. */
int env_merge(const char *const *envp, const struct strv *add, struct strv *out);

#endif
