/* The submitter: wait for the cluster, submit the entrypoint through the Ray Jobs REST API,
 * follow the job (its logs on stdout) to its end, and stop it if this pod is deleted first. */
#ifndef RAYBOOT_INIT_SUBMIT_H
#define RAYBOOT_INIT_SUBMIT_H

#include "cli.h"
#include "run.h"

/* `rayboot submit [--address URL] -- ENTRYPOINT...`: any cluster, no plan, no GCS wait. */
int submit_main(const struct cli *cli, const char *const *envp);

/* The submitter role of a pod (RAYBOOT_ROLE=submitter, or the Volcano submitter task): waits for
 * the head's GCS and the expected workers first, then submits to the head's dashboard. */
int submit_from_plan(struct run *r, const char *const *envp);

#endif
