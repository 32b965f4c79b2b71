/* Parsing the run-time knobs; what they govern is in init/ and sidecar/. */
#include "settings.h"

#include <string.h>

#include "env.h"
#include "number.h"

/* Defaults, each with its reason. */
#define WAIT_TIMEOUT_DEFAULT_MS (600 * 1000L)      /* a head's image pull can take minutes */
#define WORKERS_TIMEOUT_DEFAULT_MS (300 * 1000L)   /* then the job runs on whoever joined */
#define GRACE_PERIOD_DEFAULT_MS (30 * 1000L)       /* Kubernetes' default grace period */
#define HEAD_LOSS_TIMEOUT_DEFAULT_MS (300 * 1000L) /* a restarted Volcano job re-creates the head */
/* Ray 2.60's default for RAY_gcs_rpc_server_reconnect_timeout_s: its raylet exits after it. */
#define GCS_RECONNECT_TIMEOUT_DEFAULT_S 60
#define GCS_RECONNECT_VAR "RAY_gcs_rpc_server_reconnect_timeout_s"
/* The head's rendezvous (init/rendezvous.c): its default is here, not in init/, because the
 * sidecar loads these settings too. */
#define RENDEZVOUS_PORT_DEFAULT 8079
/* A day: longer is a typo, not a deadline. */
#define SETTINGS_SECONDS_MAX 86400L

static int seconds(const char *const *envp, const char *name, long *ms, struct errbuf *err)
{
    const char *v = env_lookup_nonempty(envp, name);
    if (!v)
        return 0;
    if (number_parse_millis(v, SETTINGS_SECONDS_MAX, ms) < 0)
        return errbuf_set(err, "%s=%.40s: expected a number of seconds (0 to %ld)", name, v, SETTINGS_SECONDS_MAX);
    return 0;
}

/* A TCP port, 0 (off) to 65535. */
static int port_number(const char *const *envp, const char *name, int *port, struct errbuf *err)
{
    const char *v = env_lookup_nonempty(envp, name);
    long n;
    if (!v)
        return 0;
    if (env_parse_count(v, 65535, &n) < 0)
        return errbuf_set(err, "%s=%.40s: expected a port number, 1 to 65535 (0: off)", name, v);
    *port = (int)n;
    return 0;
}

/* Ray reads its variable as a whole number of seconds (a uint32): so does rayboot, to the day. */
static int reconnect_timeout(const char *const *envp, long *ms, struct errbuf *err)
{
    const char *v = env_lookup_nonempty(envp, GCS_RECONNECT_VAR);
    long n = GCS_RECONNECT_TIMEOUT_DEFAULT_S;
    if (v && env_parse_count(v, SETTINGS_SECONDS_MAX, &n) < 0)
        return errbuf_set(err, "%s=%.40s: expected a whole number of seconds (0 to %ld)", GCS_RECONNECT_VAR, v,
                          SETTINGS_SECONDS_MAX);
    *ms = n * 1000L;
    return 0;
}

int settings_load(const char *const *envp, struct settings *s, struct errbuf *err)
{
    const char *code = env_lookup_nonempty(envp, "RAYBOOT_EVICTION_EXIT_CODE");

    memset(s, 0, sizeof(*s));
    s->wait_timeout_ms = WAIT_TIMEOUT_DEFAULT_MS;
    s->workers_timeout_ms = WORKERS_TIMEOUT_DEFAULT_MS;
    s->grace_period_ms = GRACE_PERIOD_DEFAULT_MS;
    s->head_loss_timeout_ms = HEAD_LOSS_TIMEOUT_DEFAULT_MS;
    if (seconds(envp, "RAYBOOT_WAIT_TIMEOUT", &s->wait_timeout_ms, err) < 0 ||
        seconds(envp, "RAYBOOT_WORKERS_TIMEOUT", &s->workers_timeout_ms, err) < 0 ||
        seconds(envp, "RAYBOOT_GRACE_PERIOD", &s->grace_period_ms, err) < 0 ||
        seconds(envp, "RAYBOOT_HEAD_LOSS_TIMEOUT", &s->head_loss_timeout_ms, err) < 0)
        return -1;
    s->rendezvous_port = RENDEZVOUS_PORT_DEFAULT;
    if (port_number(envp, "RAYBOOT_RENDEZVOUS_PORT", &s->rendezvous_port, err) < 0 ||
        reconnect_timeout(envp, &s->gcs_reconnect_timeout_ms, err) < 0)
        return -1;
    if (code) {
        long v;
        if (env_parse_count(code, 255, &v) < 0)
            return errbuf_set(err, "RAYBOOT_EVICTION_EXIT_CODE=%.40s: expected 0..255", code);
        s->eviction_exit_code = (int)v;
    }
    return 0;
}
