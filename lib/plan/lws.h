/* What LeaderWorkerSet's pod webhook gives every container of a group's pods (tests/fixtures/
 * README.md): LWS_LEADER_ADDRESS (L-g.<subdomain>.<namespace>), LWS_GROUP_SIZE, LWS_WORKER_INDEX. */
#ifndef RAYBOOT_LWS_H
#define RAYBOOT_LWS_H

#include <stdbool.h>

#include "dnsname.h"
#include "errbuf.h"
#include "strv.h"

struct lws_pod {
    bool found;
    char name[DNS_LABEL_MAX_BYTES + 1];       /* L, the LeaderWorkerSet */
    char group[DNS_LABEL_MAX_BYTES + 1];      /* L-g, the leader pod's name: the group's */
    long group_index;                         /* g */
    long size;                                /* LWS_GROUP_SIZE: pods in the group, the leader's too */
    long worker_index;                        /* LWS_WORKER_INDEX: 0 is the leader */
    char leader_host[DNS_NAME_MAX_BYTES + 1]; /* "L-g.<subdomain>" */
    char namespace_[DNS_LABEL_MAX_BYTES + 1]; /* the last label of LWS_LEADER_ADDRESS */
};

/* Whether any LWS_* variable of the three is set (a pod that looks like LeaderWorkerSet's). */
bool lws_present(const char *const *envp);

/* Reads the three variables into out. Returns 1 (out->found), 0 when none is set, or -1 with a
 * message naming the variable when one is missing, malformed or out of range. A hostname that is
 * not the one LeaderWorkerSet gives this pod (L-g, or L-g-w) is a warning pushed to warnings. */
int lws_parse(const char *const *envp, const char *hostname, struct lws_pod *out, struct strv *warnings,
              struct errbuf *err);

#endif
