/* `rayboot [-- COMMAND]`: the life of a Ray pod, from the plan to the last reaped child. */
#ifndef RAYBOOT_INIT_RUN_H
#define RAYBOOT_INIT_RUN_H

#include "cli.h"

/* Returns rayboot's exit code. */
int run_main(const struct cli *cli, const char *const *envp);

#endif
