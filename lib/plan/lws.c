/* LeaderWorkerSet's three variables, read and checked against each other and the hostname. The
 * plan (lib/plan/plan.c) turns them into a role and a head; every group is its own Ray cluster, its
 * leader (LWS_WORKER_INDEX=0) the head. */
#include "lws.h"

#include <stdio.h>
#include <string.h>

#include "count.h"
#include "env.h"

static const char *const lws_vars[] = {"LWS_LEADER_ADDRESS", "LWS_GROUP_SIZE", "LWS_WORKER_INDEX"};
#define LWS_NVARS (sizeof(lws_vars) / sizeof(lws_vars[0]))

bool lws_present(const char *const *envp)
{
    for (size_t i = 0; i < LWS_NVARS; i++) {
        if (env_lookup(envp, lws_vars[i]))
            return true;
    }
    return false;
}

/* LWS_LEADER_ADDRESS: exactly "L-g.<subdomain>.<namespace>", three DNS labels, the first ending in
 * the group index (LeaderWorkerSet reads it back from the leader's name the same way). */
static int parse_address(const char *address, struct lws_pod *out, struct errbuf *err)
{
    char labels[3][DNS_LABEL_MAX_BYTES + 1];
    const char *start = address, *dash;
    int n = 0;

    for (;;) {
        size_t len = strcspn(start, ".");
        if (n == 3 || !dnsname_label_valid(start, len))
            goto bad;
        memcpy(labels[n], start, len);
        labels[n++][len] = '\0';
        if (!start[len])
            break;
        start += len + 1;
    }
    dash = strrchr(labels[0], '-');
    if (n != 3 || !dash || !dnsname_label_valid(labels[0], (size_t)(dash - labels[0])) ||
        count_parse(dash + 1, strlen(dash + 1), &out->group_index) < 0)
        goto bad;
    memcpy(out->group, labels[0], sizeof(out->group));
    memcpy(out->namespace_, labels[2], sizeof(out->namespace_));
    snprintf(out->name, sizeof(out->name), "%.*s", (int)(dash - labels[0]), labels[0]);
    snprintf(out->leader_host, sizeof(out->leader_host), "%s.%s", labels[0], labels[1]);
    return 0;
bad:
    return errbuf_set(err,
                      "LWS_LEADER_ADDRESS=%.120s: not a LeaderWorkerSet leader address (expected "
                      "<name>-<group>.<subdomain>.<namespace>, e.g. vllm-0.vllm.default)",
                      address);
}

int lws_parse(const char *const *envp, const char *hostname, struct lws_pod *out, struct strv *warnings,
              struct errbuf *err)
{
    const char *value[LWS_NVARS];
    char expected[DNS_LABEL_MAX_BYTES + 24]; /* "L-g-w": a label, "-" and a long */
    size_t set = 0;

    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < LWS_NVARS; i++)
        set += (value[i] = env_lookup(envp, lws_vars[i])) != NULL;
    if (set == 0)
        return 0;
    for (size_t i = 0; i < LWS_NVARS; i++) {
        if (!value[i])
            return errbuf_set(err,
                              "%s is not set, but %s is: LeaderWorkerSet sets LWS_LEADER_ADDRESS, "
                              "LWS_GROUP_SIZE and LWS_WORKER_INDEX together",
                              lws_vars[i],
                              lws_vars[value[0]   ? 0
                                       : value[1] ? 1
                                                  : 2]);
    }
    if (parse_address(value[0], out, err) < 0)
        return -1;
    if (count_parse(value[1], strlen(value[1]), &out->size) < 0 || out->size < 1)
        return errbuf_set(err, "LWS_GROUP_SIZE=%.40s: not a group size (expected a number from 1 to %ld)", value[1],
                          COUNT_MAX);
    if (count_parse(value[2], strlen(value[2]), &out->worker_index) < 0)
        return errbuf_set(err, "LWS_WORKER_INDEX=%.40s: not an index (expected a number)", value[2]);
    if (out->worker_index >= out->size)
        return errbuf_set(err,
                          "LWS_WORKER_INDEX=%ld is not below LWS_GROUP_SIZE=%ld: a group's pods are numbered "
                          "0 (the leader) to size - 1",
                          out->worker_index, out->size);
    out->found = true;
    /* The StatefulSet controller names the leader L-g and its workers L-g-w, and makes that the
     * hostname: another one (hostNetwork, say) changes nothing here but is worth knowing. */
    if (out->worker_index == 0)
        snprintf(expected, sizeof(expected), "%s", out->group);
    else
        snprintf(expected, sizeof(expected), "%s-%ld", out->group, out->worker_index);
    if (hostname && hostname[0] && strcmp(hostname, expected) != 0 &&
        strv_pushf(warnings,
                   "HOSTNAME=%s, but LeaderWorkerSet names this pod %s (LWS_LEADER_ADDRESS, "
                   "LWS_WORKER_INDEX=%ld); using the variables",
                   hostname, expected, out->worker_index) < 0)
        return errbuf_set(err, "out of memory");
    return 1;
}
