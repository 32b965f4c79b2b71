/* `rayboot submit [--address URL] -- ENTRYPOINT...`: the submitter against any dashboard, with no
 * plan and no wait for a GCS. */
#ifndef RAYBOOT_INIT_SUBMIT_CMD_H
#define RAYBOOT_INIT_SUBMIT_CMD_H

#include "cli.h"

/* Returns the exit code (docs/configuration.md, "Exit codes"). */
int submit_cmd_run(const struct cli *cli, const char *const *envp);

#endif
