/* `rayboot plan`: builds the plan from this process's inputs and prints it on stdout. */
#include "plan_cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "exitcode.h"
#include "log.h"
#include "plan.h"
#include "plan_render.h"
#include "settings.h"

int plan_cmd_run(const struct cli *cli, const char *const *envp)
{
    char hostname[DNS_NAME_MAX_BYTES + 1] = "";
    struct plan_input in = {envp, &cli->plugin, hostname, cli->command, cli->command_argc, true};
    struct plan plan;
    struct settings settings;
    struct errbuf err;
    char *out;

    if (gethostname(hostname, sizeof(hostname) - 1) < 0)
        hostname[0] = '\0';
    /* The run's knobs are checked too: what `plan` accepts, the run accepts. */
    if (plan_build(&in, &plan, &err) < 0 || plan_check_command(&plan, &err) < 0 ||
        settings_load(envp, &settings, &err) < 0) {
        log_error("%s", err.msg);
        plan_free(&plan);
        return EXIT_CONFIG;
    }
    for (size_t i = 0; i < plan.warnings.len; i++)
        log_warn("%s", plan.warnings.items[i]);
    out = cli->plan_format == CLI_PLAN_JSON ? plan_render_json(&plan) : plan_render_text(&plan);
    plan_free(&plan);
    if (!out) {
        log_error("out of memory rendering the plan");
        return EXIT_CONFIG;
    }
    fputs(out, stdout);
    if (cli->plan_format == CLI_PLAN_JSON)
        fputc('\n', stdout);
    free(out);
    return fflush(stdout) == 0 ? EXIT_OK : EXIT_CONFIG;
}
