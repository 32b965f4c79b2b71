/* The seccomp allowlist for the prober: the process that parses DNS and HTTP/2 from the network.
 * Never applied to a process that will exec Ray or the user's command (filters are inherited). */
#ifndef RAYBOOT_SANDBOX_H
#define RAYBOOT_SANDBOX_H

#include <stddef.h>

#include <seccomp.h>

#include "errbuf.h"

/* One rule: the call, and conditions on its arguments that must all hold (alternatives are more
 * rules). errno_answer 0 allows the call; another value answers it with that errno. */
struct sandbox_rule {
    const char *name; /* how tests, knockout builds and README name the rule */
    int nr;
    unsigned int nargs;
    struct scmp_arg_cmp args[3];
    int errno_answer;
};

#define SANDBOX_ALLOW(call)                                                                                            \
    {                                                                                                                  \
#call, SCMP_SYS(call), 0, {{0 } }, 0                                                                           \
    }
#define SANDBOX_ALLOW_AS(name, call)                                                                                   \
    {                                                                                                                  \
        name, SCMP_SYS(call), 0, {{0}}, 0                                                                              \
    }
#define SANDBOX_ALLOW_IF(name, call, cmp)                                                                              \
    {                                                                                                                  \
        name, SCMP_SYS(call), 1, {cmp}, 0                                                                              \
    }
#define SANDBOX_ALLOW_IF2(name, call, cmp1, cmp2)                                                                      \
    {                                                                                                                  \
        name, SCMP_SYS(call), 2, {cmp1, cmp2}, 0                                                                       \
    }
#define SANDBOX_ANSWER(call, err)                                                                                      \
    {                                                                                                                  \
#call "-" #err, SCMP_SYS(call), 0, {{0 } }, err                                                                \
    }
#define SANDBOX_ARG_EQ(n, value)                                                                                       \
    {                                                                                                                  \
        .arg = (n), .op = SCMP_CMP_EQ, .datum_a = (value), .datum_b = 0                                                \
    }
#define SANDBOX_ARG_MASKED_EQ(n, mask, value)                                                                          \
    {                                                                                                                  \
        .arg = (n), .op = SCMP_CMP_MASKED_EQ, .datum_a = (mask), .datum_b = (value)                                    \
    }

/* Sets no_new_privs and loads the filter into the calling process. Anything outside the list
 * kills the process (SIGSYS). */
int sandbox_confine_prober(struct errbuf *err);

/* The same, with the prober's rules and n more: for a helper that does what the prober does and
 * a little more (the sidecar's API reader: TLS). */
int sandbox_confine_prober_and(const struct sandbox_rule *more, size_t n, struct errbuf *err);

/* Sets no_new_privs and loads a filter of only these rules: for a helper that does far less than
 * the prober (the rendezvous' listening child, init/rendezvous.c). */
int sandbox_confine_only(const struct sandbox_rule *rules, size_t n, struct errbuf *err);

#endif
