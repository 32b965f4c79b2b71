/* Parsing rayboot's command line. Options may come before or after the subcommand word; the
 * plugin flags' meaning belongs to lib/plan/pluginargs.c. */
#include "cli.h"

#include <string.h>

#include "flags.h"
#include "plan.h"

static bool cli_takes_value(const char *name)
{
    return strcmp(name, "format") == 0 || strcmp(name, "log-format") == 0 || strcmp(name, "address") == 0 ||
           plugin_args_knows(name);
}

static int cli_option(struct cli *cli, const struct flag *f, struct errbuf *err)
{
    if (strcmp(f->name, "h") == 0 || strcmp(f->name, "help") == 0) {
        if (flag_refuse_value(f, err) < 0)
            return -1;
        cli->action = CLI_HELP;
    } else if (strcmp(f->name, "version") == 0) {
        if (flag_refuse_value(f, err) < 0)
            return -1;
        if (cli->action != CLI_HELP)
            cli->action = CLI_VERSION;
    } else if (strcmp(f->name, "log-format") == 0) {
        if (log_format_parse(f->value, &cli->log_format) < 0)
            return errbuf_set(err, "--log-format=%.40s: expected text or json", f->value);
    } else if (strcmp(f->name, "format") == 0) {
        if (strcmp(f->value, "json") == 0)
            cli->plan_format = CLI_PLAN_JSON;
        else if (strcmp(f->value, "text") == 0)
            cli->plan_format = CLI_PLAN_TEXT;
        else
            return errbuf_set(err, "--format=%.40s: expected json or text", f->value);
    } else if (strcmp(f->name, "address") == 0) {
        cli->address = f->value;
    } else if (plugin_args_knows(f->name)) {
        return plugin_args_set(&cli->plugin, f->name, f->value, err);
    } else {
        if (strcmp(f->name, "clientServerPort") == 0)
            return plugin_args_set(&cli->plugin, f->name, f->value, err);
        return errbuf_set(err, "unknown option --%s", f->name);
    }
    return 0;
}

static int cli_subcommand(struct cli *cli, const char *word, bool *seen, struct errbuf *err)
{
    if (*seen && cli->action == CLI_INSTALL && !cli->install_dir) {
        cli->install_dir = word;
        return 0;
    }
    if (*seen)
        return errbuf_set(err, "unexpected argument '%.80s' (the user's command goes after --)", word);
    *seen = true;
    if (strcmp(word, "install") == 0) {
        if (cli->action == CLI_RUN)
            cli->action = CLI_INSTALL;
        return 0;
    }
    if (strcmp(word, "plan") == 0 || strcmp(word, "submit") == 0) {
        if (cli->action == CLI_RUN)
            cli->action = word[0] == 'p' ? CLI_PLAN : CLI_SUBMIT;
        return 0;
    }
    return errbuf_set(
        err, "unknown subcommand '%.80s' (expected plan, submit or install; the user's command goes after --)", word);
}

int cli_parse(int argc, char **argv, const char *const *envp, struct cli *cli, struct errbuf *err)
{
    struct flag_iter it = {argc, argv, 1};
    struct flag f;
    bool have_subcommand = false;
    int kind;

    memset(cli, 0, sizeof(*cli));
    cli->action = CLI_RUN;
    cli->plan_format = CLI_PLAN_JSON;
    cli->log_format = LOG_FORMAT_TEXT;
    if (plan_plugin_args(envp, &cli->plugin, err) < 0)
        return -1;
    while ((kind = flag_next(&it, cli_takes_value, &f, err)) != FLAG_END) {
        if (kind < 0)
            return -1;
        if (kind == FLAG_TERMINATOR) {
            cli->command = argv + it.index;
            cli->command_argc = argc - it.index;
            break;
        }
        if (kind == FLAG_POSITIONAL && cli_subcommand(cli, f.value, &have_subcommand, err) < 0)
            return -1;
        if (kind == FLAG_OPTION && cli_option(cli, &f, err) < 0)
            return -1;
    }
    if (cli->address && cli->action != CLI_SUBMIT && cli->action != CLI_HELP && cli->action != CLI_VERSION)
        return errbuf_set(err, "--address is an option of `rayboot submit`");
    return 0;
}
