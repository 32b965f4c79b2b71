/* `rayboot submit`: the dashboard's address from --address or RAYBOOT_DASHBOARD_ADDRESS, the
 * knobs from the environment, then submit.c does the rest. SIGTERM, SIGINT and SIGHUP stop the
 * job, read by the pod's one signal path (pod.c); no other signal is caught (nothing runs under
 * this process to forward it to). */
#include "submit_cmd.h"

#include <signal.h>

#include "dashboard.h"
#include "env.h"
#include "exitcode.h"
#include "log.h"
#include "pod.h"
#include "proc.h"
#include "settings.h"
#include "submit.h"

static int open_signals(struct errbuf *err)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    return proc_signalfd_open(&set, err);
}

int submit_cmd_run(const struct cli *cli, const char *const *envp)
{
    const char *url = cli->address ? cli->address : env_lookup_nonempty(envp, "RAYBOOT_DASHBOARD_ADDRESS");
    const char *from = cli->address ? "--address" : "RAYBOOT_DASHBOARD_ADDRESS";
    struct submit_config c = {.argv = cli->command, .argc = cli->command_argc, .url = url, .url_from = from};
    char base[DASHBOARD_BASE_MAX_BYTES];
    struct wait_stop stop;
    struct pod pod;
    struct errbuf err;
    int rc;

    if (cli->command_argc == 0) {
        log_error("rayboot submit: give the job's entrypoint after -- (rayboot submit --address URL -- python job.py)");
        return EXIT_CONFIG;
    }
    if (submit_check_entrypoint(cli->command, cli->command_argc, &err) < 0) {
        log_error("rayboot submit: %s", err.msg);
        return EXIT_CONFIG;
    }
    if (!url) {
        log_error("rayboot submit: no dashboard address: give --address=http://HOST:8265 or RAYBOOT_DASHBOARD_ADDRESS");
        return EXIT_CONFIG;
    }
    pod_init(&pod);
    pod.interrupt_stops = true;
    if (settings_load(envp, &pod.settings, &err) < 0 || (pod.sigfd = open_signals(&err)) < 0) {
        log_error("%s", err.msg);
        pod_free(&pod);
        return EXIT_CONFIG;
    }
    stop = pod_waiter(&pod, POD_WAKE_ON_STOP);
    c.stop = &stop;
    c.wait_timeout_ms = pod.settings.wait_timeout_ms;
    c.head_loss_timeout_ms = pod.settings.head_loss_timeout_ms;
    c.grace_period_ms = pod.settings.grace_period_ms;
    if (dashboard_base_parse(url, from, base, &err) < 0 || submit_config_load(&c, envp, NULL, &err) < 0) {
        log_error("%s", err.msg);
        rc = EXIT_CONFIG;
    } else {
        rc = submit_job(&c);
    }
    submit_config_free(&c);
    pod_free(&pod);
    return rc;
}
