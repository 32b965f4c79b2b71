/* libFuzzer target: lib/plan/volcano.c's parse of the svc plugin's ConfigMap keys (J-svc mounted at
 * /etc/volcano). Input: records separated by NUL bytes, each the key's file name on its first
 * line and the file's contents after it, fed through volcano_parse_key as volcano_load feeds the
 * files it reads. Every host kept must be a valid DNS name inside its task's buffer; task keys
 * must be what a file name can map to; the task count stays bounded. */
#include <ctype.h>
#include <string.h>

#include "fuzz.h"
#include "volcano.h"

/* More records than VOLCANO_TASKS_MAX plus a few, so the bound is reached. */
#define FUZZ_RECORDS_MAX (VOLCANO_TASKS_MAX + 8)

static void check_tasks(const struct volcano_tasks *vt)
{
    if (vt->ntasks > VOLCANO_TASKS_MAX)
        __builtin_trap();
    for (size_t t = 0; t < vt->ntasks; t++) {
        const struct volcano_task *task = &vt->tasks[t];
        size_t key_len = strnlen(task->key, sizeof(task->key));
        if (key_len == 0 || key_len == sizeof(task->key) || task->declared < -1 || (task->nhosts && !task->hosts))
            __builtin_trap();
        for (const char *c = task->key; *c; c++) {
            if (!(islower((unsigned char)*c) || isdigit((unsigned char)*c) || *c == '_'))
                __builtin_trap();
        }
        for (size_t i = 0; i < task->nhosts; i++) {
            const char *h = task->hosts[i];
            if (!dnsname_valid(h, strlen(h)))
                __builtin_trap();
        }
    }
}

/* The name ends in ".host" and is not a dot file: what load_dir's first pass looks for. */
static bool names_host_file(const char *name)
{
    size_t n = strlen(name);
    return name[0] != '.' && n > 5 && strcmp(name + n - 5, ".host") == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct volcano_tasks vt;
    struct errbuf err;
    /* Zeroed: gcc's -fanalyzer cannot tie nrec to the records filled, and calls the rest unset. */
    char *copy = fuzz_strndup(data, size), *names[FUZZ_RECORDS_MAX] = {NULL}, *texts[FUZZ_RECORDS_MAX] = {NULL};
    size_t nrec = 0;
    bool have_host_files = false;
    int rc = 0;

    /* Records are NUL-separated; the copy is NUL-terminated, so each is a string. */
    for (size_t off = 0; off <= size && nrec < FUZZ_RECORDS_MAX; nrec++) {
        char *parts[2];
        size_t len = strlen(copy + off);
        size_t n = fuzz_split(copy + off, '\n', parts, 2);
        names[nrec] = parts[0];
        texts[nrec] = n > 1 ? parts[1] : copy + off + len; /* "" */
        have_host_files |= names_host_file(names[nrec]);
        off += len + 1;
    }
    memset(&vt, 0, sizeof(vt));
    for (size_t r = 0; rc == 0 && r < nrec; r++) {
        char *contents = strdup(texts[r]);
        if (!contents)
            abort();
        rc = volcano_parse_key(&vt, names[r], contents, have_host_files, &err);
        if (rc < 0 && !fuzz_terminated(err.msg, sizeof(err.msg)))
            __builtin_trap();
    }
    if (rc == 0) {
        size_t t, i;
        check_tasks(&vt);
        (void)volcano_find_task(&vt, "head");
        if (vt.ntasks > 0 && vt.tasks[0].nhosts > 0) {
            char first[DNS_NAME_MAX_BYTES + 1];
            const char *h = vt.tasks[0].hosts[0];
            size_t label = strcspn(h, ".");
            memcpy(first, h, label);
            first[label] = '\0';
            if (volcano_find_host(&vt, first, &t, &i) != 0 || t >= vt.ntasks || i >= vt.tasks[t].nhosts)
                __builtin_trap();
        }
    }
    volcano_tasks_free(&vt);
    free(copy);
    return 0;
}
