/* The plan as data: its types, their set-up and release, the names its enums print as, and its
 * warnings. Filling it is the planner's (plan.c, with podview.c and detect.c). */
#ifndef RAYBOOT_PLANDATA_H
#define RAYBOOT_PLANDATA_H

#include <stdbool.h>

#include "address.h"
#include "dnsname.h"
#include "errbuf.h"
#include "jobset.h"
#include "lws.h"
#include "pluginargs.h"
#include "rayversion.h"
#include "strv.h"

/* A count or index beyond this is garbage, not a cluster (Volcano's largest jobs are ~10^4). */
#define PLAN_COUNT_MAX 1000000L

enum plan_role { PLAN_ROLE_HEAD, PLAN_ROLE_WORKER, PLAN_ROLE_SUBMITTER };
/* Where the plan came from. Detection looks at volcano, lws, jobset, indexed-job in that order and
 * the first one present decides (lib/plan/detect.c, which warns about the others); explicit settings
 * (RAYBOOT_ROLE, RAYBOOT_HEAD_ADDRESS) win over all of them. */
enum plan_source {
    PLAN_SOURCE_VOLCANO,
    PLAN_SOURCE_INDEXED_JOB,
    PLAN_SOURCE_EXPLICIT,
    PLAN_SOURCE_LWS,
    PLAN_SOURCE_JOBSET
};

/* Room for one piece of evidence: a variable or file and the value that decided. */
#define PLAN_EVIDENCE_MAX_BYTES 192

/* What a Volcano task is to the cluster; only PLAN_TASK_WORKER tasks count in workers_expected. */
enum plan_task_kind { PLAN_TASK_HEAD, PLAN_TASK_SUBMITTER, PLAN_TASK_WORKER, PLAN_TASK_OTHER };

/* One Volcano task as the plan counted it: the evidence behind workers_expected. */
struct plan_task {
    char name[DNS_LABEL_MAX_BYTES + 1];
    long hosts; /* entries in its host list (0 for replicas: 0) */
    enum plan_task_kind kind;
    bool shared_hostname; /* its template sets hostname: one entry whatever its replicas */
};

/* Ray's node labels (lib/plan/raylabels.c): what they are, and whether `ray start` gets them. */
struct plan_labels {
    struct strv labels;    /* "key=value": rayboot's, then RAYBOOT_RAY_LABELS's (which win) */
    bool passed;           /* ray_start holds --labels=... */
    struct rayversion ray; /* the local Ray's version and where it was read, or why not */
    struct strv notes;     /* what the run logs about them (a clash, why they are not passed) */
};

struct plan_input {
    const char *const *envp;
    const struct plugin_args *plugin; /* from plan_plugin_args, then the command line */
    const char *hostname;             /* gethostname(), used when HOSTNAME is unset */
    char *const *command;             /* the user's command (after "--"), may be NULL */
    int command_argc;
    /* Measure /dev/shm against Ray's object store (lib/plan/shm.h): rayboot, in the Ray container;
     * not the sidecar, whose /dev/shm and memory limit are its own container's. */
    bool check_shm;
};

struct plan {
    enum plan_role role;
    enum plan_source source;
    /* Empty strings and -1 mean "unknown" (null in JSON). */
    char job[DNS_LABEL_MAX_BYTES + 1];
    char namespace_[DNS_LABEL_MAX_BYTES + 1];
    char task[DNS_LABEL_MAX_BYTES + 1];
    char pod_name[DNS_NAME_MAX_BYTES + 1];
    char pod_ip[ADDRESS_HOST_MAX_BYTES]; /* RAYBOOT_POD_IP, else this pod's /etc/hosts line */
    /* Ray's node name (ray start --node-name): podview_node_name's, or the user's own
     * --node-name in RAYBOOT_RAY_START_ARGS. The drain and readiness find the node by it. */
    char node_name[DNS_NAME_MAX_BYTES + 1];
    char cluster_domain[DNS_NAME_MAX_BYTES + 1];
    long index;
    char head_host[ADDRESS_HOST_MAX_BYTES];
    char head_fqdn[ADDRESS_HOST_MAX_BYTES];
    int head_port;
    int dashboard_port;
    int client_port;
    long workers_expected;
    /* The soft RLIMIT_NOFILE Ray is started with (lib/plan/nofile.h): 0 keeps the limit as it
     * is; never lowered, and the hard limit caps it (at run time: `plan` does not look). */
    long nofile;
    /* Where workers_expected came from: "volcano" (every task but the head and the submitter),
     * "--worker", "RAYBOOT_WORKERS_EXPECTED", or NULL when unknown. */
    const char *workers_from;
    struct plan_task *tasks; /* every Volcano task, sorted by name; NULL elsewhere */
    size_t ntasks;
    /* What decided the role and named the head: the variable or file, with its value
     * ("LWS_WORKER_INDEX=0", "/etc/volcano/worker.host"); empty when nothing did. */
    char role_from[PLAN_EVIDENCE_MAX_BYTES];
    char head_from[PLAN_EVIDENCE_MAX_BYTES];
    struct lws_pod lws;       /* lws.found when the source is (or was, before RAYBOOT_ROLE) lws */
    struct jobset_pod jobset; /* the same for jobset */
    struct strv ray_start;    /* argv; [0] is the ray executable, [1] "start" */
    struct strv command;      /* the user's argv, or empty */
    struct strv ray_env;      /* KEY=VALUE added for Ray and the command */
    struct strv command_env;  /* KEY=VALUE added for the command only */
    struct strv warnings;
    struct plan_labels labels;
};

/* Everything empty or unknown (-1); plan_free releases what was added since. */
void plan_init(struct plan *p);
void plan_free(struct plan *p);

/* The cluster's name: "namespace/job" (both read in the pod, the same on the head and every worker:
 * the Volcano job, the Indexed Job, the LWS group, the JobSet), or "" when either is unknown (a
 * pod that only RAYBOOT_ROLE and RAYBOOT_HEAD_ADDRESS describe). The rendezvous' key is bound to it
 * (lib/ray/rdvauth.h). */
#define PLAN_CLUSTER_NAME_MAX_BYTES (2 * DNS_LABEL_MAX_BYTES + 2)
void plan_cluster_name(const struct plan *p, char out[PLAN_CLUSTER_NAME_MAX_BYTES]);

/* Adds a warning to the plan. 0, or -1 with "out of memory". */
int plan_warn(struct plan *p, struct errbuf *err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

const char *plan_role_name(enum plan_role role);
const char *plan_task_kind_name(enum plan_task_kind kind);
const char *plan_source_name(enum plan_source source);

/* One piece of the plan's evidence (p->role_from, p->head_from), cut to fit. */
void plan_evidence(char dst[PLAN_EVIDENCE_MAX_BYTES], const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
