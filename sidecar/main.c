/* rayboot-sidecar's entry point: the command line and the environment, then the plan (the same
 * rules as rayboot's, to find the GCS and this pod's node), then the two HTTP ports and the event
 * loop in loop.c. `rayboot-sidecar drain` is the client of the drain port (drainclient.c). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <microhttpd.h>

#include "drainclient.h"
#include "endpoints.h"
#include "env.h"
#include "exitcode.h"
#include "flags.h"
#include "guard.h"
#include "http.h"
#include "log.h"
#include "loop.h"
#include "monotime.h"
#include "proc.h"
#include "rayauth.h"
#include "rdvauth.h"
#include "raytls.h"
#include "readiness.h"
#include "relro.h"
#include "secrets.h"
#include "sidecar.h"
#include "version.h"

extern char **environ;

static const char usage_text[] =
    "Usage: rayboot-sidecar [--log-format=text|json] [RAY PLUGIN FLAGS...]\n"
    "       rayboot-sidecar drain [--deadline=SECONDS]\n"
    "       rayboot-sidecar -h | --help | --version\n"
    "\n"
    "A container beside a Ray container (a regular container, or a native sidecar: an\n"
    "initContainer with restartPolicy: Always). It drains the pod's Ray node before the pod goes,\n"
    "answers probes, and records why the pod ended. It needs neither Ray nor Python.\n"
    "\n"
    "Probes port (RAYBOOT_SIDECAR_PORT, default 8077, every address: the kubelet's probes):\n"
    "  GET /healthz              the sidecar is alive\n"
    "  GET /readyz               200 when this pod's Ray node is ALIVE in the GCS (head: the GCS is\n"
    "                            SERVING, or see RAYBOOT_SIDECAR_READINESS), 503 with the reason\n"
    "                            otherwise, and from the moment a drain starts: a readinessProbe\n"
    "                            for the Ray container\n"
    "  GET /metrics              Prometheus text: drains, their outcome and duration, readiness\n"
    "\n"
    "Drain port (RAYBOOT_SIDECAR_DRAIN_PORT, default 8078, on 127.0.0.1: this pod only):\n"
    "  GET /hello                who listens (and how long a drain may take), at once\n"
    "  POST /drain               drain this node (DrainNode, PREEMPTION) and answer when it has left\n"
    "                            or the deadline passed: RAYBOOT_GRACE_PERIOD - 3 s, whatever the\n"
    "                            caller asks. With API access, only while this pod is going: its Pod\n"
    "                            is read first, and one not being deleted (no deletionTimestamp, no\n"
    "                            DisruptionTarget) or not readable is refused (409). Without API\n"
    "                            access (no token, or 401/403) any call drains, said at start. A\n"
    "                            second call waits for the same drain, a later one gets its result;\n"
    "                            one after a drain that failed drains again. A drain the pod outlives\n"
    "                            by RAYBOOT_GRACE_PERIOD + 5 s (no deletion followed it) is forgotten.\n"
    "                            With Ray's token, each answer carries X-Rayboot-Proof: an HMAC over\n"
    "                            the caller's X-Rayboot-Nonce, the path, the status and the body.\n"
    "  Another process holding the port does not stop the sidecar: the probes are served and the\n"
    "  port is tried again every 2 s.\n"
    "\n"
    "rayboot-sidecar drain makes that call (a GET /hello first) and prints the answer: the Ray\n"
    "container's lifecycle.preStop.exec (--deadline=SECONDS, which older manifests pass, is checked\n"
    "and ignored). With Ray's token set (RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH, as Ray finds it)\n"
    "every answer must be proven by it. Exit 0 drained (or still draining at the deadline), 1 the\n"
    "drain could not be made, 2 usage, 70 the sidecar's answer was none of these (or the client\n"
    "failed), 75 the sidecar did not answer, 76 what holds the port is not the sidecar (no proof,\n"
    "or no answer to /hello within 2 s), 77 refused: this pod is not going.\n"
    "\n"
    "On SIGTERM it drains if nobody has, waits until Ray's processes are gone when it can see them\n"
    "(shareProcessNamespace), and exits 0.\n"
    "\n"
    "The GCS address comes from the same rules as `rayboot plan`: the Volcano ray plugin's flags\n"
    "(here or in RAYBOOT_PLUGIN_ARGS), Volcano's files and variables, an Indexed Job, or\n"
    "RAYBOOT_ROLE and RAYBOOT_HEAD_ADDRESS.\n"
    "\n"
    "Environment:\n"
    "  RAYBOOT_SIDECAR_PORT       the probes' port (default 8077)\n"
    "  RAYBOOT_SIDECAR_DRAIN_PORT the drain's port on 127.0.0.1 (default 8078; `drain` reads it too)\n"
    "  RAYBOOT_SIDECAR_READINESS  the head's /readyz: node (default: the GCS SERVING), cluster (every\n"
    "                             node of the cluster ALIVE: the head and its workers, from\n"
    "                             LWS_GROUP_SIZE or as rayboot plan counts them, or\n"
    "                             RAYBOOT_WORKERS_EXPECTED), or cluster-leader-ready (as cluster, but\n"
    "                             200 while no worker has joined yet: LeaderWorkerSet's startupPolicy\n"
    "                             LeaderReady makes the workers only once the leader is Ready).\n"
    "                             Another value, or a head that cannot count its workers: exit 2\n"
    "  RAYBOOT_POD_IP             downward API status.podIP: this pod's node's name, as rayboot\n"
    "                             names it (default: this pod's line in /etc/hosts, the pod name)\n"
    "  RAYBOOT_POD_NAME           downward API metadata.name (default: the hostname)\n"
    "  RAYBOOT_POD_NAMESPACE      downward API metadata.namespace (default: the service account's)\n"
    "  RAYBOOT_GRACE_PERIOD       the pod's terminationGracePeriodSeconds (default 30)\n"
    "  RAYBOOT_TERMINATION_LOG    where the reason goes (default /dev/termination-log, if present)\n"
    "  KUBERNETES_SERVICE_HOST, KUBERNETES_SERVICE_PORT and the mounted service-account token:\n"
    "                             the Pod is read from the API server (RBAC: get on pods): whether it is\n"
    "                             going (a /drain drains only then) and why; without them any /drain\n"
    "                             drains and the reason is \"unknown\"\n"
    "  RAY_AUTH_MODE, RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH, RAY_ENABLE_K8S_TOKEN_AUTH:\n"
    "                             Ray's token for the GCS calls, read as rayboot reads them\n"
    "                             (rayboot --help); `drain` reads it too, to check the proof\n"
    "  RAY_USE_TLS, RAY_TLS_CA_CERT, and RAY_TLS_SERVER_CERT with RAY_TLS_SERVER_KEY, or\n"
    "  RAYBOOT_TLS_CA_KEY (a certificate made in memory): Ray's TLS, every GCS call over mutual\n"
    "                             TLS, the GCS's certificate checked against the CA before the\n"
    "                             token is sent (docs/tls.md); RAYBOOT_TLS_CERT_HOURS: its validity\n"
    "  RAYBOOT_DEBUG=1            debug log lines\n"
    "  RAYBOOT_ROOT               a directory put in front of every file path it reads (tests)\n"
    "\n"
    "Exit codes: 0 done (after SIGTERM), 2 configuration error, 70 internal error.\n";

struct sidecar_cli {
    bool help, version;
    enum log_format log_format;
    struct plugin_args plugin;
};

static bool takes_value(const char *name)
{
    return strcmp(name, "log-format") == 0 || plugin_args_knows(name);
}

static int parse_cli(int argc, char **argv, const char *const *envp, struct sidecar_cli *cli, struct errbuf *err)
{
    struct flag_iter it = {argc, argv, 1};
    struct flag f;
    int kind;
    memset(cli, 0, sizeof(*cli));
    if (plan_plugin_args(envp, &cli->plugin, err) < 0)
        return -1;
    while ((kind = flag_next(&it, takes_value, &f, err)) != FLAG_END) {
        if (kind < 0)
            return -1;
        if (kind != FLAG_OPTION)
            return errbuf_set(err, "unexpected argument '%.80s'", kind == FLAG_TERMINATOR ? "--" : f.value);
        if (strcmp(f.name, "help") == 0 || strcmp(f.name, "h") == 0) {
            if (flag_refuse_value(&f, err) < 0)
                return -1;
            cli->help = true;
        } else if (strcmp(f.name, "version") == 0) {
            if (flag_refuse_value(&f, err) < 0)
                return -1;
            cli->version = true;
        } else if (strcmp(f.name, "log-format") == 0) {
            if (log_format_parse(f.value, &cli->log_format) < 0)
                return errbuf_set(err, "--log-format=%.40s: expected text or json", f.value);
        } else if (plugin_args_set(&cli->plugin, f.name, f.value, err) < 0) {
            return -1;
        }
    }
    return 0;
}

static int parse_port(const char *const *envp, const char *name, int fallback, int *port, struct errbuf *err)
{
    const char *text = env_lookup_nonempty(envp, name);
    long v;
    *port = fallback;
    if (!text)
        return 0;
    /* 0 asks for any free port: tests run many sidecars on one loopback. */
    if (env_parse_count(text, 65535, &v) < 0)
        return errbuf_set(err, "%s=%.40s: expected a port number (1-65535)", name, text);
    *port = (int)v;
    return 0;
}

static bool takes_deadline(const char *name)
{
    return strcmp(name, "deadline") == 0;
}

/* rayboot-sidecar drain [--deadline=SECONDS]: the client of the drain port. --deadline is what
 * older manifests pass: still checked, never sent (the sidecar's deadline is its own). */
static int drain_command(int argc, char **argv, const char *const *envp)
{
    struct flag_iter it = {argc, argv, 2};
    struct errbuf err;
    struct flag f;
    int kind, port;
    while ((kind = flag_next(&it, takes_deadline, &f, &err)) != FLAG_END) {
        if (kind < 0 || kind != FLAG_OPTION) {
            log_error("%s (usage: rayboot-sidecar drain [--deadline=SECONDS])",
                      kind < 0 ? err.msg : "unexpected argument");
            return EXIT_CONFIG;
        }
        if (strcmp(f.name, "help") == 0 || strcmp(f.name, "h") == 0) {
            fputs(usage_text, stdout);
            return EXIT_OK;
        }
        if (strcmp(f.name, "deadline") != 0) {
            log_error("--%.64s: unknown flag (usage: rayboot-sidecar drain [--deadline=SECONDS])", f.name);
            return EXIT_CONFIG;
        }
        if (drainclient_deadline_check(f.value ? f.value : "", &err) < 0) {
            log_error("%s", err.msg);
            return EXIT_CONFIG;
        }
    }
    if (parse_port(envp, "RAYBOOT_SIDECAR_DRAIN_PORT", SIDECAR_DEFAULT_DRAIN_PORT, &port, &err) < 0) {
        log_error("%s", err.msg);
        return EXIT_CONFIG;
    }
    return drainclient_run(port, envp);
}

/* Ray's TLS and Ray's token checked at start-up, as rayboot does; the prober reads them itself
 * before it confines itself, and sends the token with every call, over TLS when it is on. The
 * sidecar keeps the token's HMAC key (never the token) to prove its drain port's answers. */
static int check_auth(struct sidecar *s, struct errbuf *err)
{
    struct rayauth auth;
    if (raytls_check(s->envp, err) < 0 || rayauth_load(s->envp, s->root, &auth, err) < 0)
        return -1;
    if (auth.token_mode) {
        log_info("Ray token authentication: the token from %s (it also proves this sidecar to the preStop hook)",
                 auth.source);
        s->proof_keyed = rdvauth_key_from_header(&s->proof_key, auth.header) == 0;
    }
    rayauth_clear(&auth);
    return 0;
}

static int setup(struct sidecar *s, const struct sidecar_cli *cli, struct errbuf *err)
{
    char hostname[DNS_NAME_MAX_BYTES + 1] = "";
    struct plan_input in = {s->envp, &cli->plugin, hostname, NULL, 0, false}; /* its own /dev/shm: not Ray's */
    sigset_t set;

    if (gethostname(hostname, sizeof(hostname) - 1) < 0)
        hostname[0] = '\0';
    if (plan_build(&in, &s->plan, err) < 0 || settings_load(s->envp, &s->settings, err) < 0 ||
        sidecar_readiness_load(s, err) < 0 ||
        parse_port(s->envp, "RAYBOOT_SIDECAR_PORT", SIDECAR_DEFAULT_PORT, &s->port, err) < 0 ||
        parse_port(s->envp, "RAYBOOT_SIDECAR_DRAIN_PORT", SIDECAR_DEFAULT_DRAIN_PORT, &s->drain_port, err) < 0 ||
        check_auth(s, err) < 0)
        return EXIT_CONFIG;
    signal(SIGPIPE, SIG_IGN);
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    s->sigfd = proc_signalfd_open(&set, err);
    if (s->sigfd < 0)
        return EXIT_SOFTWARE;
    s->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (s->epfd < 0) {
        errbuf_set(err, "epoll_create1: %s", strerror(errno));
        return EXIT_SOFTWARE;
    }
    if (prober_start(&s->prober, s->root, err) < 0)
        return EXIT_SOFTWARE;
    s->http = http_start(NULL, s->port, endpoints_probes, s, NULL, err);
    if (!s->http) {
        errbuf_prefix(err, "RAYBOOT_SIDECAR_PORT");
        return EXIT_CONFIG;
    }
    /* A drain port another process holds: the probes are served all the same, the port is tried
     * again, and SIGTERM still drains (loop.c). */
    if (sidecar_listen_drain(s, monotime_ms(), err) < 0)
        return EXIT_CONFIG;
    if (!s->http_drain)
        log_warn("%s: serving the probes without it and trying it again every few seconds; meanwhile a preStop "
                 "`rayboot-sidecar drain` reaches that process (with Ray's token set, it cannot pass for this "
                 "sidecar), and SIGTERM still drains",
                 err->msg);
    guard_start(s, monotime_ms());
    return 0;
}

static void teardown(struct sidecar *s)
{
    http_stop(s->http_drain);
    http_stop(s->http);
    kubeapi_reason_cancel(&s->api);
    prober_stop(&s->prober);
    if (s->epfd >= 0)
        close(s->epfd);
    if (s->sigfd >= 0)
        close(s->sigfd);
    plan_free(&s->plan);
}

/* The version lines with what only the sidecar links: its HTTP server. */
static void print_version(void)
{
    char more[64];
    snprintf(more, sizeof(more), "libmicrohttpd %s", MHD_get_version());
    version_print(stdout, "rayboot-sidecar", more);
}

int main(int argc, char **argv)
{
    struct sidecar_cli cli;
    struct sidecar s;
    struct errbuf err;
    const char *debug = getenv("RAYBOOT_DEBUG");
    int rc;

    log_init("rayboot-sidecar", LOG_FORMAT_TEXT);
    if (relro_protect(&err) < 0 || secrets_hide_process(&err) < 0) {
        log_error("%s", err.msg);
        return EXIT_SOFTWARE;
    }
    log_set_debug(debug && debug[0] && strcmp(debug, "0") != 0);
    if (argc > 1 && strcmp(argv[1], "drain") == 0)
        return drain_command(argc, argv, (const char *const *)environ);
    if (parse_cli(argc, argv, (const char *const *)environ, &cli, &err) < 0) {
        log_error("%s (see rayboot-sidecar --help)", err.msg);
        return EXIT_CONFIG;
    }
    log_init("rayboot-sidecar", cli.log_format);
    if (cli.help) {
        fputs(usage_text, stdout);
        return EXIT_OK;
    }
    if (cli.version) {
        print_version();
        return EXIT_OK;
    }

    memset(&s, 0, sizeof(s));
    s.envp = (const char *const *)environ;
    s.root = env_lookup_nonempty(s.envp, "RAYBOOT_ROOT");
    s.sigfd = s.epfd = -1;
    s.prober.pid = s.prober.fd = -1;
    s.api.fd = s.api.pid = -1;
    rc = setup(&s, &cli, &err);
    if (rc != 0) {
        log_error("%s", err.msg);
        teardown(&s);
        return rc;
    }
    log_info("serving on port %d: /healthz /readyz /metrics; drain on %s:%d; %s %s, GCS %s:%d, node %s",
             http_bound_port(s.http), SIDECAR_DRAIN_ADDRESS, s.drain_port, plan_role_name(s.plan.role), s.plan.pod_name,
             s.plan.head_fqdn, s.plan.head_port,
             s.plan.node_name[0] ? s.plan.node_name : "(unknown: set RAYBOOT_POD_IP)");
    rc = sidecar_loop(&s) == 0 ? EXIT_OK : EXIT_SOFTWARE;
    teardown(&s);
    return rc;
}
