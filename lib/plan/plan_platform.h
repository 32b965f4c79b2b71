/* The plan's LeaderWorkerSet and JobSet sources (what lib/plan/lws.c and lib/plan/jobset.c read, turned into
 * a role, a head and workers_expected), and the order in which every source is looked at. */
#ifndef RAYBOOT_PLAN_PLATFORM_H
#define RAYBOOT_PLAN_PLATFORM_H

#include <stdbool.h>

#include "plandata.h"

/* LeaderWorkerSet, then JobSet. When one describes this pod: fills p (source, job, task, index,
 * workers_expected and its evidence, p->lws or p->jobset), *role and head_host (the head's name
 * below the namespace, e.g. "vllm-0.vllm"; "" when unknown), and returns 1. Returns 0 when neither
 * does, -1 with a message naming the variable, label or file at fault. */
int plan_platform_detect(const struct plan_input *in, const char *root, const char *hostname, const char *fqdn,
                         bool role_given, bool address_given, struct plan *p, enum plan_role *role,
                         char head_host[ADDRESS_HOST_MAX_BYTES], struct errbuf *err);

/* After p->source was decided: a warning for every other source this pod shows (volcano_origin
 * when Volcano's lists were found, NULL otherwise; index_text JOB_COMPLETION_INDEX or NULL), naming
 * both and the order. A JobSet's JOB_COMPLETION_INDEX is its own and is not another source. */
int plan_platform_warn_others(const struct plan_input *in, const char *root, const char *volcano_origin,
                              const char *index_text, struct plan *p, struct errbuf *err);

#endif
