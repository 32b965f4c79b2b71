/* libFuzzer target: lib/plan/lws.c's reading of LeaderWorkerSet's LWS_LEADER_ADDRESS, LWS_GROUP_SIZE and
 * LWS_WORKER_INDEX. Input: the hostname on the first line, then one KEY=VALUE per line (the
 * environment). A pod it accepts must hold together: a leader host of two DNS labels ending in the
 * group's index, a worker index below the group size; a refusal must carry a message. */
#include <stdio.h>
#include <string.h>

#include "count.h"
#include "fuzz.h"
#include "lws.h"

/* More lines than any real pod's three variables, so duplicates and noise are reached. */
#define FUZZ_ENV_MAX 32

static void check_pod(const struct lws_pod *l)
{
    char group[DNS_LABEL_MAX_BYTES + 24];
    size_t host_len = strlen(l->leader_host);
    if (!l->found || l->size < 1 || l->size > COUNT_MAX || l->worker_index < 0 || l->worker_index >= l->size ||
        l->group_index < 0 || l->group_index > COUNT_MAX)
        __builtin_trap();
    if (!dnsname_label_valid(l->name, strlen(l->name)) || !dnsname_label_valid(l->group, strlen(l->group)) ||
        !dnsname_label_valid(l->namespace_, strlen(l->namespace_)) || !dnsname_valid(l->leader_host, host_len))
        __builtin_trap();
    /* The group is the name and the index (leading zeros aside), and the leader host starts with it. */
    snprintf(group, sizeof(group), "%s-", l->name);
    if (strncmp(l->group, group, strlen(group)) != 0 || strncmp(l->leader_host, l->group, strlen(l->group)) != 0 ||
        l->leader_host[strlen(l->group)] != '.' || strchr(l->leader_host + strlen(l->group) + 1, '.'))
        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *copy = fuzz_strndup(data, size), *lines[FUZZ_ENV_MAX + 2];
    const char *envp[FUZZ_ENV_MAX + 1];
    size_t n = fuzz_split(copy, '\n', lines, FUZZ_ENV_MAX + 1), ne = 0;
    struct lws_pod l;
    struct strv warnings;
    struct errbuf err;
    int rc;

    for (size_t i = 1; i < n; i++)
        envp[ne++] = lines[i];
    envp[ne] = NULL;
    strv_init(&warnings);
    rc = lws_parse(envp, lines[0], &l, &warnings, &err);
    if (rc == 1)
        check_pod(&l);
    /* None found means none set; a refusal carries a message. */
    if ((rc == 0 && (lws_present(envp) || l.found)) || (rc < 0 && !fuzz_terminated(err.msg, sizeof(err.msg))))
        __builtin_trap();
    if (warnings.len > 1)
        __builtin_trap();
    strv_free(&warnings);
    free(copy);
    return 0;
}
