/* The ray plugin's flags: names, defaults and value checks, exactly as Volcano defines them
 * (v1.13 to v1.16). Splitting words into flags is lib/base/flags.c's job. */
#include "pluginargs.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "address.h"
#include "flags.h"
#include "strv.h"
#include "text.h"

/* RAYBOOT_PLUGIN_ARGS is an env string, which the kernel caps at 128 KiB; no real list comes
 * near this many words. */
#define PLUGIN_ARGS_MAX_WORDS 64

enum plugin_value { VALUE_TASK, VALUE_TASK_LIST, VALUE_CONTAINER, VALUE_PORT };

struct plugin_flag {
    const char *name;
    enum plugin_value kind;
    size_t offset;
};

static const struct plugin_flag plugin_flags[] = {
    {"head", VALUE_TASK, offsetof(struct plugin_args, head_task)},
    {"headContainer", VALUE_CONTAINER, offsetof(struct plugin_args, head_container)},
    {"worker", VALUE_TASK_LIST, offsetof(struct plugin_args, worker_tasks)},
    {"workerContainer", VALUE_CONTAINER, offsetof(struct plugin_args, worker_container)},
    {"port", VALUE_PORT, offsetof(struct plugin_args, port)},
    {"dashboardPort", VALUE_PORT, offsetof(struct plugin_args, dashboard_port)},
    {"clientPort", VALUE_PORT, offsetof(struct plugin_args, client_port)},
};

#define PLUGIN_FLAG_COUNT (sizeof(plugin_flags) / sizeof(plugin_flags[0]))
#define PLUGIN_FLAG_LIST "--head, --headContainer, --worker, --workerContainer, --port, --dashboardPort, --clientPort"

void plugin_args_init(struct plugin_args *pa)
{
    memset(pa, 0, sizeof(*pa));
    text_copy(pa->head_task, sizeof(pa->head_task), "head", sizeof("head") - 1);
    text_copy(pa->head_container, sizeof(pa->head_container), "head", sizeof("head") - 1);
    text_copy(pa->worker_tasks, sizeof(pa->worker_tasks), "worker", sizeof("worker") - 1);
    text_copy(pa->worker_container, sizeof(pa->worker_container), "worker", sizeof("worker") - 1);
    pa->port = 6379;
    pa->dashboard_port = 8265;
    pa->client_port = 10001;
}

static const struct plugin_flag *plugin_flag_find(const char *name)
{
    for (size_t i = 0; i < PLUGIN_FLAG_COUNT; i++) {
        if (strcmp(plugin_flags[i].name, name) == 0)
            return &plugin_flags[i];
    }
    return NULL;
}

bool plugin_args_knows(const char *name)
{
    return plugin_flag_find(name) != NULL;
}

/* Every plugin flag takes a value; unknown words are rejected later with their name. */
static bool plugin_flag_takes_value(const char *name)
{
    return plugin_args_knows(name);
}

/* --worker=a,b: each name a task name, none empty. */
static int set_task_list(struct plugin_args *pa, const char *name, const char *value, struct errbuf *err)
{
    size_t len = strlen(value);
    if (len >= sizeof(pa->worker_tasks))
        return errbuf_set(err, "--%s: the list is longer than %d bytes", name, PLUGIN_WORKER_TASKS_MAX_BYTES - 1);
    for (const char *w = value;; w++) {
        size_t n = strcspn(w, ",");
        if (!dnsname_label_valid(w, n))
            return errbuf_set(err,
                              "--%s=%.80s: '%.*s' is not a valid task name (lower-case letters, digits "
                              "and '-', at most 63; several tasks are separated by commas)",
                              name, value, (int)(n > 80 ? 80 : n), w);
        w += n;
        if (!*w)
            break;
    }
    memcpy(pa->worker_tasks, value, len + 1);
    pa->worker_given = true;
    return 0;
}

bool plugin_args_names_worker(const struct plugin_args *pa, const char *task)
{
    size_t len = strlen(task);
    for (const char *w = pa->worker_tasks; *w;) {
        size_t n = strcspn(w, ",");
        if (n == len && strncmp(w, task, n) == 0)
            return true;
        w += n + (w[n] == ',');
    }
    return false;
}

int plugin_args_set(struct plugin_args *pa, const char *name, const char *value, struct errbuf *err)
{
    const struct plugin_flag *f = plugin_flag_find(name);
    char *field;

    if (!f) {
        if (strcmp(name, "clientServerPort") == 0)
            return errbuf_set(err, "unknown flag --clientServerPort: the Volcano ray plugin has no "
                                   "such flag (a user guide is wrong; Volcano silently stops parsing "
                                   "there); the client server port is --clientPort");
        return errbuf_set(err, "unknown flag --%s (the Volcano ray plugin's flags are %s)", name, PLUGIN_FLAG_LIST);
    }
    if (!value)
        return errbuf_set(err, "flag needs a value: --%s", name);
    field = (char *)pa + f->offset;
    if (f->kind == VALUE_PORT) {
        if (port_parse(value, (int *)(void *)field, err) < 0)
            return errbuf_prefix(err, "--%s=%.32s", name, value);
        if (f->offset == offsetof(struct plugin_args, port))
            pa->port_given = true;
        return 0;
    }
    if (f->kind == VALUE_TASK_LIST)
        return set_task_list(pa, name, value, err);
    if (!dnsname_label_valid(value, strlen(value)))
        return errbuf_set(err,
                          "--%s=%.80s: not a valid %s name (lower-case letters, digits and "
                          "'-', at most 63)",
                          name, value, f->kind == VALUE_TASK ? "task" : "container");
    snprintf(field, DNS_LABEL_MAX_BYTES + 1, "%s", value);
    return 0;
}

int plugin_args_parse_list(struct plugin_args *pa, const char *list, struct errbuf *err)
{
    struct strv words;
    struct flag_iter it;
    struct flag f;
    int kind, rc = 0;

    strv_init(&words);
    if (strv_split_words(&words, list, PLUGIN_ARGS_MAX_WORDS) < 0) {
        strv_free(&words);
        return errbuf_set(err, errno == E2BIG ? "more than %d words" : "out of memory", PLUGIN_ARGS_MAX_WORDS);
    }
    it.argc = (int)words.len;
    it.argv = words.items;
    it.index = 0;
    while (rc == 0 && (kind = flag_next(&it, plugin_flag_takes_value, &f, err)) != FLAG_END) {
        if (kind < 0)
            rc = -1;
        else if (kind != FLAG_OPTION)
            rc = errbuf_set(err, "'%.80s' is not a flag (expected %s)", f.value ? f.value : "--", PLUGIN_FLAG_LIST);
        else
            rc = plugin_args_set(pa, f.name, f.value, err);
    }
    strv_free(&words);
    return rc;
}
