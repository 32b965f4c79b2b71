/* The host lists Volcano's svc plugin gives every pod: /etc/volcano (ConfigMap J-svc) when it is
 * mounted, else the VC_<TASK>_HOSTS environment variables. */
#ifndef RAYBOOT_VOLCANO_H
#define RAYBOOT_VOLCANO_H

#include <stdbool.h>
#include <stddef.h>

#include "dnsname.h"
#include "errbuf.h"

/* The API server caps a ConfigMap at 1 MiB, so no key of one can be larger. */
#define VOLCANO_FILE_MAX_BYTES (1024 * 1024)
/* A Volcano Job with more tasks than this is not a Ray cluster we can plan. */
#define VOLCANO_TASKS_MAX 128

struct volcano_task {
    char key[DNS_LABEL_MAX_BYTES + 1]; /* task name, lower case, '-' written '_' */
    char *buf;                         /* the list as read, split in place */
    char **hosts;                      /* nhosts entries "hostname.subdomain" into buf */
    size_t nhosts;                     /* 0 for a task with replicas: 0 (VC_<K>_NUM says 0) */
    long declared;                     /* VC_<K>_NUM, or -1 when absent */
    char list_name[96];                /* the file or variable the list came from, for messages */
};

struct volcano_tasks {
    struct volcano_task *tasks; /* sorted by key */
    size_t ntasks;
    const char *origin; /* where the lists came from, for messages */
};

/* Returns 0 with the Volcano host lists found (out->ntasks is 0 when there are none: not a
 * Volcano pod; nothing to free then), or -1 with a message naming the file or variable when they
 * are unreadable or malformed. */
int volcano_load(const char *root, const char *const *envp, struct volcano_tasks *out, struct errbuf *err);
void volcano_tasks_free(struct volcano_tasks *vt);

/* One key of the ConfigMap: its file name and contents (taken over, freed here). Adds or updates
 * the task it names; names that are no Volcano key are ignored. have_host_files says whether the
 * listing holds any *.host file (then the VC_*_HOSTS keys are ignored). Pure, so it can be
 * fuzzed; volcano_load reads the files and calls the same parsing. */
int volcano_parse_key(struct volcano_tasks *vt, const char *name, char *text, bool have_host_files, struct errbuf *err);

/* Task name -> key ("gpu-workers" -> "gpu_workers"); false when it does not fit. */
int volcano_task_key(const char *task, char key[DNS_LABEL_MAX_BYTES + 1]);
const struct volcano_task *volcano_find_task(const struct volcano_tasks *vt, const char *task);
/* Finds the entry whose first label is hostname. Returns 0 and its task and position, or -1. */
int volcano_find_host(const struct volcano_tasks *vt, const char *hostname, size_t *task, size_t *index);

#endif
