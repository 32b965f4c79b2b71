/* rayboot's command line: subcommand, own options, the ray plugin flags, and the user's command. */
#ifndef RAYBOOT_INIT_CLI_H
#define RAYBOOT_INIT_CLI_H

#include <stdbool.h>

#include "errbuf.h"
#include "log.h"
#include "pluginargs.h"

enum cli_action { CLI_RUN, CLI_PLAN, CLI_SUBMIT, CLI_INSTALL, CLI_HELP, CLI_VERSION };
enum cli_plan_format { CLI_PLAN_JSON, CLI_PLAN_TEXT };

struct cli {
    enum cli_action action;
    enum cli_plan_format plan_format;
    enum log_format log_format;
    struct plugin_args plugin; /* RAYBOOT_PLUGIN_ARGS, then the command line's flags */
    const char *address;       /* submit --address URL; points into argv */
    const char *install_dir;   /* install DIR; points into argv */
    char *const *command;      /* after "--"; points into argv */
    int command_argc;
};

/* Returns 0, or -1 with a message naming the flag or variable at fault. */
int cli_parse(int argc, char **argv, const char *const *envp, struct cli *cli, struct errbuf *err);

#endif
