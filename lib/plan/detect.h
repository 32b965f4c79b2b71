/* Platform detection: which source describes this pod (Volcano, LeaderWorkerSet, JobSet, an
 * Indexed Job, in that order) and what it says. Explicit settings and the final decision are
 * plan.c's. */
#ifndef RAYBOOT_DETECT_H
#define RAYBOOT_DETECT_H

#include <stdbool.h>

#include "errbuf.h"
#include "plandata.h"
#include "podview.h"

/* A detected topology, before ray start is built. */
struct detection {
    bool found; /* this pod is in it (role is valid) */
    enum plan_role role;
    char head_host[ADDRESS_HOST_MAX_BYTES]; /* the head's name below the namespace ("" unknown) */
};

/* The first source in rayboot's order that describes this pod fills p (source, job, task, index,
 * workers_expected, their evidence, p->lws or p->jobset, warnings) and d, with a warning for every
 * other source the pod shows. None is an error only when RAYBOOT_ROLE is not set (role_given).
 * role_given also turns a pod missing from Volcano's lists into a warning; address_given
 * (RAYBOOT_HEAD_ADDRESS) means no subdomain is needed to name the head. Returns 0, or -1 with a
 * message naming the variable, label or file at fault. */
int detect_source(const struct plan_input *in, const struct pod_view *pod, bool role_given, bool address_given,
                  struct plan *p, struct detection *d, struct errbuf *err);

#endif
