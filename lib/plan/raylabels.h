/* Ray's node labels for this pod: where it sits in its job (rayboot.io/...), the user's own
 * (RAYBOOT_RAY_LABELS), and `ray start --labels` for the Rays that take it. */
#ifndef RAYBOOT_RAYLABELS_H
#define RAYBOOT_RAYLABELS_H

#include "errbuf.h"
#include "plandata.h"

#define RAYLABELS_ENV "RAYBOOT_RAY_LABELS"
/* Ours: Ray keeps ray.io/ for its own labels. */
#define RAYLABELS_PREFIX "rayboot.io/"
/* `ray start --labels` came in Ray 2.49. */
#define RAYLABELS_MIN_MAJOR 2UL
#define RAYLABELS_MIN_MINOR 49UL

/* Fills p->labels from the plan made so far and adds --labels=... to p->ray_start when the Ray
 * that will run (ray: argv[0], found under root) takes it. -1 with a message naming
 * RAYBOOT_RAY_LABELS and the bad key or value (exit 2); a Ray too old or of unknown version is
 * not an error: the labels are not passed, with a note (a warning when the user gave some). */
int raylabels_plan(const char *const *envp, const char *root, const char *ray, struct plan *p, struct errbuf *err);

/* "k=v,k2=v2" of labels, as --labels takes it; NULL when out of memory. The caller frees it. */
char *raylabels_join(const struct strv *labels);

#endif
