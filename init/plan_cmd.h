/* `rayboot plan`: print the plan and exit. */
#ifndef RAYBOOT_INIT_PLAN_CMD_H
#define RAYBOOT_INIT_PLAN_CMD_H

#include "cli.h"

/* Returns the exit code: 0, or 2 for a configuration error (logged). */
int plan_cmd_run(const struct cli *cli, const char *const *envp);

#endif
