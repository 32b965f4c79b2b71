/* The Volcano `ray` plugin's own flags, accepted verbatim so users copy them from their vcjob. */
#ifndef RAYBOOT_PLUGINARGS_H
#define RAYBOOT_PLUGINARGS_H

#include <stdbool.h>

#include "dnsname.h"
#include "errbuf.h"

/* --worker may name several tasks, comma-separated (rayboot's extension; Volcano takes one name):
 * VOLCANO_TASKS_MAX names of up to 63 bytes would not fit, but no Ray job has that many worker
 * groups, and a longer list is refused with the flag's name. */
#define PLUGIN_WORKER_TASKS_MAX_BYTES 1024

struct plugin_args {
    char head_task[DNS_LABEL_MAX_BYTES + 1];          /* --head, default "head" */
    char head_container[DNS_LABEL_MAX_BYTES + 1];     /* --headContainer: only Volcano uses it */
    char worker_tasks[PLUGIN_WORKER_TASKS_MAX_BYTES]; /* --worker: one task or a comma list, default "worker" */
    char worker_container[DNS_LABEL_MAX_BYTES + 1];   /* --workerContainer: only Volcano uses it */
    int port;                                         /* --port, GCS, default 6379 */
    int dashboard_port;                               /* --dashboardPort, default 8265 */
    int client_port;                                  /* --clientPort, default 10001 */
    bool port_given;
    bool worker_given; /* --worker was given: only its tasks are worker groups */
};

/* Volcano's defaults. */
void plugin_args_init(struct plugin_args *pa);
/* Whether name (without dashes) is one of the plugin's seven flags. */
bool plugin_args_knows(const char *name);
/* Sets one flag; the message names the flag and what is wrong with its value. */
int plugin_args_set(struct plugin_args *pa, const char *name, const char *value, struct errbuf *err);
/* Parses a whitespace-separated list (RAYBOOT_PLUGIN_ARGS): every word must be a plugin flag. */
int plugin_args_parse_list(struct plugin_args *pa, const char *list, struct errbuf *err);
/* Whether task (a task name, '-' not '_') is one of the --worker list's names. */
bool plugin_args_names_worker(const struct plugin_args *pa, const char *task);

#endif
