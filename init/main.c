/* rayboot's entry point: parses the command line and hands over to the subcommand. The plan,
 * the waiting and the supervision each live in their own module. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "env.h"
#include "exitcode.h"
#include "install.h"
#include "log.h"
#include "plan_cmd.h"
#include "relro.h"
#include "run.h"
#include "secrets.h"
#include "submit_cmd.h"
#include "usage.h"
#include "version.h"

extern char **environ;

int main(int argc, char **argv)
{
    struct cli cli;
    struct errbuf err;
    const char *debug = getenv("RAYBOOT_DEBUG");

    log_init("rayboot", LOG_FORMAT_TEXT);
    if (relro_protect(&err) < 0 || secrets_hide_process(&err) < 0) {
        log_error("%s", err.msg);
        return EXIT_SOFTWARE;
    }
    log_set_debug(debug && strcmp(debug, "0") != 0 && debug[0]);
    if (cli_parse(argc, argv, (const char *const *)environ, &cli, &err) < 0) {
        log_error("%s (see rayboot --help)", err.msg);
        return EXIT_CONFIG;
    }
    log_init("rayboot", cli.log_format);
    switch (cli.action) {
    case CLI_HELP:
        usage_print(stdout);
        return EXIT_OK;
    case CLI_VERSION:
        version_print(stdout, "rayboot", NULL);
        return EXIT_OK;
    case CLI_PLAN:
        return plan_cmd_run(&cli, (const char *const *)environ);
    case CLI_INSTALL:
        return install_main(cli.install_dir);
    case CLI_SUBMIT:
        return submit_cmd_run(&cli, (const char *const *)environ);
    case CLI_RUN:
        break;
    }
    return run_main(&cli, (const char *const *)environ);
}
