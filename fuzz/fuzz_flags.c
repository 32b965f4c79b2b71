/* libFuzzer target: rayboot's command line (init/cli.c over lib/base/flags.c and lib/plan/pluginargs.c) and
 * RAYBOOT_PLUGIN_ARGS. Input: the RAYBOOT_PLUGIN_ARGS value on the first line, then one argument
 * per line. What parses must hold valid values (task and container names DNS labels, ports
 * 1..65535) and the user's command must be exactly the arguments after "--". */
#include <string.h>

#include "cli.h"
#include "dnsname.h"
#include "fuzz.h"

/* A command line longer than this adds nothing the parser has not seen. */
#define FUZZ_ARGS_MAX 64

static void check_plugin(const struct plugin_args *pa)
{
    const char *names[] = {pa->head_task, pa->head_container, pa->worker_container};
    for (size_t i = 0; i < 3; i++) {
        if (!fuzz_terminated(names[i], DNS_LABEL_MAX_BYTES + 1) || !dnsname_label_valid(names[i], strlen(names[i])))
            __builtin_trap();
    }
    /* --worker: a comma list of task names, each found by plugin_args_names_worker. */
    if (!fuzz_terminated(pa->worker_tasks, sizeof(pa->worker_tasks)))
        __builtin_trap();
    for (const char *w = pa->worker_tasks;; w++) {
        char name[DNS_LABEL_MAX_BYTES + 1];
        size_t n = strcspn(w, ",");
        if (!dnsname_label_valid(w, n))
            __builtin_trap();
        memcpy(name, w, n);
        name[n] = '\0';
        if (!plugin_args_names_worker(pa, name))
            __builtin_trap();
        w += n;
        if (!*w)
            break;
    }
    if (pa->port < 1 || pa->port > 65535 || pa->dashboard_port < 1 || pa->dashboard_port > 65535 ||
        pa->client_port < 1 || pa->client_port > 65535)
        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_strndup(data, size), *lines[FUZZ_ARGS_MAX + 1], *argv[FUZZ_ARGS_MAX + 2];
    static const char env_name[] = "RAYBOOT_PLUGIN_ARGS=";
    char *env_value;
    const char *envp[2] = {NULL, NULL};
    size_t n = fuzz_split(text, '\n', lines, FUZZ_ARGS_MAX + 1);
    struct plugin_args pa;
    struct errbuf err;
    struct cli cli;
    int argc = 0;

    /* RAYBOOT_PLUGIN_ARGS alone, through both ways rayboot reads it. */
    plugin_args_init(&pa);
    if (plugin_args_parse_list(&pa, lines[0], &err) == 0)
        check_plugin(&pa);
    else if (!fuzz_terminated(err.msg, sizeof(err.msg)))
        __builtin_trap();
    env_value = malloc(sizeof(env_name) + strlen(lines[0]));
    if (!env_value)
        abort();
    memcpy(env_value, env_name, sizeof(env_name) - 1);
    memcpy(env_value + sizeof(env_name) - 1, lines[0], strlen(lines[0]) + 1);
    envp[0] = env_value;

    static char program[] = "rayboot";
    argv[argc++] = program;
    for (size_t i = 1; i < n; i++)
        argv[argc++] = lines[i];
    argv[argc] = NULL;
    if (cli_parse(argc, argv, envp, &cli, &err) == 0) {
        check_plugin(&cli.plugin);
        if (cli.action > CLI_VERSION ||
            (cli.action == CLI_INSTALL && cli.install_dir && (cli.install_dir < text || cli.install_dir > text + size)))
            __builtin_trap();
        if (cli.command && (cli.command < argv + 2 || cli.command > argv + argc || strcmp(cli.command[-1], "--") != 0 ||
                            cli.command + cli.command_argc != argv + argc))
            __builtin_trap();
        if (!cli.command && cli.command_argc != 0)
            __builtin_trap();
    } else if (!fuzz_terminated(err.msg, sizeof(err.msg))) {
        __builtin_trap();
    }
    free(env_value);
    free(text);
    return 0;
}
