/* Reading Volcano's host lists. Deciding what they mean (head, worker, counts) is detect.c's. */
#include "text.h"
#include "volcano.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "env.h"
#include "fsroot.h"
#include "number.h"

#define VOLCANO_DIR "/etc/volcano"
/* The kubelet swaps ..data atomically; a read that raced a swap is done again. Three swaps in a
 * row, each during one read, would be a very busy ConfigMap. */
#define VOLCANO_READ_ATTEMPTS 3

int volcano_task_key(const char *task, char key[DNS_LABEL_MAX_BYTES + 1])
{
    size_t n = strlen(task);
    if (n == 0 || n > DNS_LABEL_MAX_BYTES)
        return -1;
    for (size_t i = 0; i <= n; i++)
        key[i] = (char)(task[i] == '-' ? '_' : tolower((unsigned char)task[i]));
    return 0;
}

void volcano_tasks_free(struct volcano_tasks *vt)
{
    for (size_t i = 0; i < vt->ntasks; i++) {
        free(vt->tasks[i].buf);
        free(vt->tasks[i].hosts);
    }
    free(vt->tasks);
    vt->tasks = NULL;
    vt->ntasks = 0;
}

static struct volcano_task *task_get(struct volcano_tasks *vt, const char *key, bool create)
{
    struct volcano_task *t;
    for (size_t i = 0; i < vt->ntasks; i++) {
        if (strcmp(vt->tasks[i].key, key) == 0)
            return &vt->tasks[i];
    }
    if (!create || vt->ntasks >= VOLCANO_TASKS_MAX)
        return NULL;
    t = realloc(vt->tasks, (vt->ntasks + 1) * sizeof(*t));
    if (!t)
        return NULL;
    vt->tasks = t;
    t = &vt->tasks[vt->ntasks++];
    memset(t, 0, sizeof(*t));
    snprintf(t->key, sizeof(t->key), "%s", key);
    t->declared = -1;
    return t;
}

/* Splits buf on sep (newline for *.host files, comma for VC_*_HOSTS) into t's entries, taking
 * ownership of buf. Blank entries are skipped; anything that is not a host name is an error. An
 * empty list is kept (a task with replicas: 0); finish() checks it against VC_<K>_NUM. */
static int task_set_hosts(struct volcano_task *t, char *buf, char sep, const char *what, struct errbuf *err)
{
    size_t count = 1, line = 0;
    char *p = buf;

    if (!buf)
        return errbuf_set(err, "%s: out of memory", what);
    free(t->buf);
    free(t->hosts);
    t->buf = buf;
    t->nhosts = 0;
    snprintf(t->list_name, sizeof(t->list_name), "%s", what);
    for (const char *c = buf; *c; c++)
        count += *c == sep;
    t->hosts = calloc(count, sizeof(*t->hosts));
    if (!t->hosts)
        return errbuf_set(err, "%s: out of memory", what);
    while (p) {
        char *next = strchr(p, sep);
        char *end;
        if (next)
            *next++ = '\0';
        line++;
        while (isspace((unsigned char)*p))
            p++;
        end = p + strlen(p);
        while (end > p && isspace((unsigned char)end[-1]))
            *--end = '\0';
        if (*p) {
            if (!dnsname_valid(p, (size_t)(end - p)))
                return errbuf_set(err, "%s entry %zu: '%.80s' is not a host name", what, line, p);
            t->hosts[t->nhosts++] = p;
        }
        p = next;
    }
    return 0;
}

static int parse_declared(struct volcano_task *t, const char *text, const char *what, struct errbuf *err)
{
    long v;
    if (!text)
        return errbuf_set(err, "%s: unreadable", what);
    if (number_parse_trimmed(text, 0, LONG_MAX, &v) < 0)
        return errbuf_set(err, "%s: '%.40s' is not a count", what, text);
    t->declared = v;
    return 0;
}

/* "VC_GPU_WORKERS_HOSTS" with suffix "_HOSTS" -> key "gpu_workers"; false when not that shape. */
static bool key_from_var(const char *name, size_t name_len, const char *suffix, char key[DNS_LABEL_MAX_BYTES + 1])
{
    size_t slen = strlen(suffix);
    if (name_len <= 3 + slen || strncmp(name, "VC_", 3) != 0 || strncmp(name + name_len - slen, suffix, slen) != 0 ||
        name_len - 3 - slen > DNS_LABEL_MAX_BYTES)
        return false;
    for (size_t i = 0; i < name_len - 3 - slen; i++) {
        char c = name[3 + i];
        if (!(isupper((unsigned char)c) || isdigit((unsigned char)c) || c == '_'))
            return false;
        key[i] = (char)tolower((unsigned char)c);
    }
    key[name_len - 3 - slen] = '\0';
    return true;
}

/* "gpu_workers.host" -> key "gpu_workers". */
static bool key_from_host_file(const char *name, char key[DNS_LABEL_MAX_BYTES + 1])
{
    size_t n = strlen(name);
    if (n <= 5 || strcmp(name + n - 5, ".host") != 0 || n - 5 > DNS_LABEL_MAX_BYTES)
        return false;
    for (size_t i = 0; i < n - 5; i++) {
        char c = name[i];
        if (!(islower((unsigned char)c) || isdigit((unsigned char)c) || c == '_'))
            return false;
        key[i] = c;
    }
    key[n - 5] = '\0';
    return true;
}

static int compare_tasks(const void *a, const void *b)
{
    return strcmp(((const struct volcano_task *)a)->key, ((const struct volcano_task *)b)->key);
}

/* Reads one ConfigMap key file of dir (relative to root). */
static int read_key(const char *root, const char *dir, const char *name, char **text, struct errbuf *err)
{
    char path[1024];
    if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
        return errbuf_set(err, "%s/%s: path too long", dir, name);
    return fsroot_read(root, path, VOLCANO_FILE_MAX_BYTES, text, NULL, err);
}

/* What a ConfigMap key (a file of /etc/volcano) holds, judged by its name alone. */
enum key_kind { KEY_NONE, KEY_HOST_FILE, KEY_HOSTS_VAR, KEY_NUM_VAR };

/* *.host files win over VC_*_HOSTS when the listing has any (have_host_files); VC_*_NUM is read
 * for the cross-check either way. Dot files are the kubelet's (..data, ..2026_...). */
static enum key_kind classify_key(const char *name, bool have_host_files, char key[DNS_LABEL_MAX_BYTES + 1])
{
    size_t n = strlen(name);
    if (name[0] == '.')
        return KEY_NONE;
    if (key_from_host_file(name, key))
        return KEY_HOST_FILE;
    if (!have_host_files && key_from_var(name, n, "_HOSTS", key))
        return KEY_HOSTS_VAR;
    if (key_from_var(name, n, "_NUM", key))
        return KEY_NUM_VAR;
    return KEY_NONE;
}

/* Adds what one key's text says to the task the key names, taking ownership of text. */
static int add_key(struct volcano_tasks *vt, const char *name, enum key_kind kind, const char *key, char *text,
                   struct errbuf *err)
{
    struct volcano_task *t = task_get(vt, key, true);
    char what[512];
    int rc;

    if (!t) {
        free(text);
        return errbuf_set(err, "%s: more than %d tasks", VOLCANO_DIR, VOLCANO_TASKS_MAX);
    }
    snprintf(what, sizeof(what), "%s/%s", VOLCANO_DIR, name);
    if (kind != KEY_NUM_VAR)
        return task_set_hosts(t, text, kind == KEY_HOST_FILE ? '\n' : ',', what, err);
    rc = parse_declared(t, text, what, err);
    free(text);
    return rc;
}

int volcano_parse_key(struct volcano_tasks *vt, const char *name, char *text, bool have_host_files, struct errbuf *err)
{
    char key[DNS_LABEL_MAX_BYTES + 1];
    enum key_kind kind = classify_key(name, have_host_files, key);

    if (kind == KEY_NONE) {
        free(text);
        return 0;
    }
    return add_key(vt, name, kind, key, text, err);
}

/* Loads every task from one directory listing: *.host files when any exist, else the
 * VC_*_HOSTS files; VC_*_NUM for the cross-check either way. */
static int load_dir(const char *root, const char *dir, struct volcano_tasks *vt, struct errbuf *err)
{
    char path[4096];
    DIR *d;
    struct dirent *de;
    bool have_host_files = false;
    int rc = 0;

    if (fsroot_path(root, dir, path, sizeof(path)) < 0)
        return errbuf_set(err, "%s: path too long", dir);
    d = opendir(path);
    if (!d)
        return errbuf_set(err, "%s: %s", dir, strerror(errno));
    /* Two passes over one listing: the .host files decide which source the lists come from. */
    while ((de = readdir(d)) != NULL) {
        char key[DNS_LABEL_MAX_BYTES + 1];
        if (classify_key(de->d_name, false, key) == KEY_HOST_FILE)
            have_host_files = true;
    }
    rewinddir(d);
    while (rc == 0 && (de = readdir(d)) != NULL) {
        char key[DNS_LABEL_MAX_BYTES + 1];
        char *text = NULL;
        enum key_kind kind = classify_key(de->d_name, have_host_files, key);

        if (kind != KEY_NONE && (rc = read_key(root, dir, de->d_name, &text, err)) == 0)
            rc = add_key(vt, de->d_name, kind, key, text, err);
    }
    closedir(d);
    return rc;
}

/* The directory the kubelet's ..data symlink points at, so that every key is read from one
 * version of the ConfigMap. Copies that cannot store symlinks (archives, some fixture trees)
 * leave ..data as a plain file holding the target; that is followed too. A plain directory
 * without ..data is read as it is. A ..data that is a FIFO, a device or a socket is an error
 * naming it (the keys behind it could not be read anyway). */
static int resolve_data_dir(const char *root, char *dir, size_t cap, struct errbuf *err)
{
    char *text = NULL;
    char target[256];
    char link_path[4096];
    struct errbuf why;
    ssize_t n;

    snprintf(dir, cap, "%s", VOLCANO_DIR);
    if (fsroot_path(root, VOLCANO_DIR "/..data", link_path, sizeof(link_path)) < 0)
        return 0;
    n = readlink(link_path, target, sizeof(target) - 1);
    if (n < 0) {
        if (fsroot_read(root, VOLCANO_DIR "/..data", sizeof(target) - 1, &text, NULL, &why) < 0)
            return errno == EINVAL ? errbuf_set(err, "%s", why.msg) : 0;
        n = (ssize_t)strcspn(text, "\n");
        memcpy(target, text, (size_t)n);
        free(text);
    }
    if (n <= 2 || strncmp(target, "..", 2) != 0 || memchr(target, '/', (size_t)n))
        return 0;
    target[n] = '\0';
    snprintf(dir, cap, "%s/%s", VOLCANO_DIR, target);
    return 0;
}

/* Reads the version ..data points at, then checks that ..data still points there. The kubelet
 * removes an old version only after swapping ..data away from it, so an unchanged link means
 * nothing vanished mid-read: a half-deleted directory lists fewer files, or none, without any
 * error to notice it by. Returns 0 (*changed: the ConfigMap changed meanwhile, nothing kept), or
 * -1 with err set. */
static int load_one_version(const char *root, struct volcano_tasks *vt, bool *changed, struct errbuf *err)
{
    char before[512], after[512];
    int rc;

    if (resolve_data_dir(root, before, sizeof(before), err) < 0)
        return -1;
    rc = load_dir(root, before, vt, err);
    if (resolve_data_dir(root, after, sizeof(after), err) < 0) {
        volcano_tasks_free(vt);
        return -1;
    }
    *changed = strcmp(before, after) != 0;
    if (rc < 0 || *changed)
        volcano_tasks_free(vt);
    return *changed ? 0 : rc;
}

/* A task with replicas: 0 gets an empty list and VC_<K>_NUM=0 from the svc plugin (its
 * GenerateHosts writes len(hosts) for every task): zero hosts. An empty list that VC_<K>_NUM does
 * not confirm is a damaged ConfigMap, not a task scaled to zero. */
static int check_empty(const struct volcano_task *t, struct errbuf *err)
{
    char upper[DNS_LABEL_MAX_BYTES + 1];
    if (t->nhosts > 0 || t->declared == 0)
        return 0;
    for (size_t i = 0; i <= strlen(t->key); i++)
        upper[i] = (char)toupper((unsigned char)t->key[i]);
    if (t->declared < 0)
        return errbuf_set(err, "%s: the host list is empty, and no VC_%s_NUM=0 says the task has no replicas",
                          t->list_name, upper);
    return errbuf_set(err, "%s: the host list is empty, but VC_%s_NUM says %ld", t->list_name, upper, t->declared);
}

/* Tasks with a declared count but no host list are not tasks (stray VC_*_NUM keys). */
static int finish(struct volcano_tasks *vt, struct errbuf *err)
{
    size_t kept = 0;
    for (size_t i = 0; i < vt->ntasks; i++) {
        if (vt->tasks[i].hosts)
            vt->tasks[kept++] = vt->tasks[i];
    }
    vt->ntasks = kept;
    for (size_t i = 0; i < kept; i++) {
        if (check_empty(&vt->tasks[i], err) < 0) {
            volcano_tasks_free(vt);
            return -1;
        }
    }
    if (kept == 0) {
        /* "Not a Volcano pod" leaves the caller nothing to free (a leak found by fuzz/fuzz_env.c). */
        volcano_tasks_free(vt);
        return 0;
    }
    qsort(vt->tasks, vt->ntasks, sizeof(*vt->tasks), compare_tasks);
    return 0;
}

static int load_env(const char *const *envp, struct volcano_tasks *vt, struct errbuf *err)
{
    for (const char *const *e = envp; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        char key[DNS_LABEL_MAX_BYTES + 1], what[128];
        struct volcano_task *t;
        bool hosts_var, num_var;
        int rc;
        if (!eq)
            continue;
        hosts_var = key_from_var(*e, (size_t)(eq - *e), "_HOSTS", key);
        num_var = !hosts_var && key_from_var(*e, (size_t)(eq - *e), "_NUM", key);
        if (!hosts_var && !num_var)
            continue;
        text_copy(what, sizeof(what), *e, (size_t)(eq - *e));
        t = task_get(vt, key, true);
        if (!t)
            return errbuf_set(err, "environment: more than %d VC_*_HOSTS tasks", VOLCANO_TASKS_MAX);
        if (num_var) {
            rc = parse_declared(t, eq + 1, what, err);
        } else {
            char *copy = strdup(eq + 1);
            rc = copy ? task_set_hosts(t, copy, ',', what, err) : errbuf_set(err, "out of memory");
        }
        if (rc < 0)
            return -1;
    }
    return 0;
}

int volcano_load(const char *root, const char *const *envp, struct volcano_tasks *out, struct errbuf *err)
{
    char path[4096];
    memset(out, 0, sizeof(*out));
    if (fsroot_path(root, VOLCANO_DIR, path, sizeof(path)) < 0)
        return errbuf_set(err, "%s: path too long", VOLCANO_DIR);
    if (access(path, F_OK) == 0) {
        bool changed = true;
        int rc = 0;
        for (int attempt = 0; rc == 0 && changed && attempt < VOLCANO_READ_ATTEMPTS; attempt++)
            rc = load_one_version(root, out, &changed, err);
        if (rc == 0 && changed)
            return errbuf_set(err, "%s: the ConfigMap changed under each of %d reads", VOLCANO_DIR,
                              VOLCANO_READ_ATTEMPTS);
        if (rc < 0)
            return -1;
        out->origin = VOLCANO_DIR;
        if (out->ntasks > 0)
            return finish(out, err);
    }
    if (load_env(envp, out, err) < 0) {
        volcano_tasks_free(out);
        return -1;
    }
    out->origin = "the VC_*_HOSTS environment";
    return finish(out, err);
}

const struct volcano_task *volcano_find_task(const struct volcano_tasks *vt, const char *task)
{
    char key[DNS_LABEL_MAX_BYTES + 1];
    if (volcano_task_key(task, key) < 0)
        return NULL;
    for (size_t i = 0; i < vt->ntasks; i++) {
        if (strcmp(vt->tasks[i].key, key) == 0)
            return &vt->tasks[i];
    }
    return NULL;
}

int volcano_find_host(const struct volcano_tasks *vt, const char *hostname, size_t *task, size_t *index)
{
    size_t n = strlen(hostname);
    for (size_t t = 0; t < vt->ntasks; t++) {
        for (size_t i = 0; i < vt->tasks[t].nhosts; i++) {
            const char *h = vt->tasks[t].hosts[i];
            if (strncmp(h, hostname, n) == 0 && (h[n] == '.' || h[n] == '\0')) {
                *task = t;
                *index = i;
                return 0;
            }
        }
    }
    return -1;
}
