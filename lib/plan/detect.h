/* Source detection: what the pod's orchestrator says about it. A Volcano Job's svc plugin host
 * lists (every task, the head task, this pod's task and index, the workers to expect), or an
 * Indexed Job's index and subdomain. Explicit settings and the final decision are plan.c's. */
#ifndef RAYBOOT_DETECT_H
#define RAYBOOT_DETECT_H

#include <stdbool.h>

#include "errbuf.h"
#include "plandata.h"
#include "podview.h"
#include "volcano.h"

/* A detected topology, before ray start is built. */
struct detection {
    bool found; /* this pod is in it (role is valid) */
    enum plan_role role;
    char head_host[ADDRESS_HOST_MAX_BYTES];
};

/* From Volcano's host lists vt: p's job, task, index, tasks and workers_expected (with warnings).
 * role_given: RAYBOOT_ROLE is set, so a pod missing from the lists is a warning, not an error. */
int detect_volcano(const struct plan_input *in, const struct pod_view *pod, const struct volcano_tasks *vt,
                   bool role_given, struct plan *p, struct detection *d, struct errbuf *err);

/* From JOB_COMPLETION_INDEX (index_text): p's job and index, the head at index 0 of the same
 * subdomain. explicit_head: RAYBOOT_HEAD_ADDRESS names the head, so a missing subdomain is fine. */
int detect_indexed_job(const struct pod_view *pod, const char *index_text, bool explicit_head, struct plan *p,
                       struct detection *d, struct errbuf *err);

#endif
