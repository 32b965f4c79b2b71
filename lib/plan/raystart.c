/* Building `ray start` argv. Every flag is one argv string, "--name=value" or "--name": no shell
 * ever sees it, so values with spaces or quotes stay intact. */
#include "raystart.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "redact.h"

/* RAYBOOT_RAY_START_ARGS is one env string (128 KiB at most); ray start has about 60 flags. */
#define RAYSTART_USER_ARGS_MAX 128

/* Flags a worker's `ray start` aborts on or that mean nothing there (facts/ray.md). */
static const char *const head_only_flags[] = {
    "--head",
    "--port",
    "--dashboard-port",
    "--ray-client-server-port",
    "--dashboard-host",
    "--include-dashboard",
    "--redis-shard-ports",
    "--temp-dir",
    NULL,
};

static bool in_list(const char *const *list, const char *name, size_t len)
{
    for (; *list; list++) {
        if (strlen(*list) == len && strncmp(*list, name, len) == 0)
            return true;
    }
    return false;
}

/* Length of the "--name" part of "--name=value". */
static size_t flag_name_len(const char *arg)
{
    const char *eq = strchr(arg, '=');
    return eq ? (size_t)(eq - arg) : strlen(arg);
}

/* Index of the flag with arg's name in argv, or -1. */
static long find_flag(const struct strv *argv, const char *arg)
{
    size_t len = flag_name_len(arg);
    for (size_t i = 2; i < argv->len; i++) {
        if (flag_name_len(argv->items[i]) == len && strncmp(argv->items[i], arg, len) == 0)
            return (long)i;
    }
    return -1;
}

/* The user's words: a JSON array of strings when it starts with '[' (for values with spaces),
 * else whitespace-separated words. */
static int user_words(const char *text, struct strv *words, struct errbuf *err)
{
    const char *p = text;
    while (isspace((unsigned char)*p))
        p++;
    if (*p == '[') {
        cJSON *arr = cJSON_Parse(p);
        const cJSON *item;
        int rc = 0;
        if (!cJSON_IsArray(arr)) {
            cJSON_Delete(arr);
            return errbuf_set(err, "RAYBOOT_RAY_START_ARGS: not a valid JSON array of strings");
        }
        cJSON_ArrayForEach(item, arr)
        {
            if (!cJSON_IsString(item))
                rc = errbuf_set(err, "RAYBOOT_RAY_START_ARGS: every JSON array element must be a string");
            else if (words->len >= RAYSTART_USER_ARGS_MAX)
                rc = errbuf_set(err, "RAYBOOT_RAY_START_ARGS: more than %d words", RAYSTART_USER_ARGS_MAX);
            else if (strv_push(words, item->valuestring) < 0)
                rc = errbuf_set(err, "out of memory");
            if (rc < 0)
                break;
        }
        cJSON_Delete(arr);
        return rc;
    }
    if (strv_split_words(words, p, RAYSTART_USER_ARGS_MAX) < 0)
        return errbuf_set(err, errno == E2BIG ? "RAYBOOT_RAY_START_ARGS: more than %d words" : "out of memory",
                          RAYSTART_USER_ARGS_MAX);
    return 0;
}

/* Applies one user flag: replaces ours of the same name, or is added before --block. */
static int apply_user_flag(const struct raystart_input *in, struct strv *argv, const char *flag, struct strv *warnings)
{
    size_t len = flag_name_len(flag);
    long at;
    if (!in->head && in_list(head_only_flags, flag, len))
        return strv_pushf(warnings, "RAYBOOT_RAY_START_ARGS: dropped %.*s on a worker (a head-only flag)", (int)len,
                          flag);
    if (in->head && len == 9 && strncmp(flag, "--address", 9) == 0)
        return strv_pushf(warnings, "RAYBOOT_RAY_START_ARGS: dropped --address on the head (it would "
                                    "mean an external Redis there)");
    at = find_flag(argv, flag);
    if (at >= 0)
        return strv_replace(argv, (size_t)at, flag);
    /* Keep --block last, where a reader expects it. */
    if (strv_push(argv, flag) < 0)
        return -1;
    at = find_flag(argv, "--block");
    if (at >= 0 && (size_t)at != argv->len - 1) {
        char *block = argv->items[at];
        memmove(&argv->items[at], &argv->items[at + 1], (argv->len - (size_t)at - 1) * sizeof(char *));
        argv->items[argv->len - 1] = block;
    }
    return 0;
}

static int apply_user_args(const struct raystart_input *in, struct strv *argv, struct strv *warnings,
                           struct errbuf *err)
{
    struct strv words;
    int rc = 0;
    strv_init(&words);
    if (user_words(in->user_args, &words, err) < 0) {
        strv_free(&words);
        return -1;
    }
    for (size_t i = 0; rc == 0 && i < words.len; i++) {
        const char *w = words.items[i];
        char joined[8192];
        if (strncmp(w, "--", 2) != 0 || w[2] == '\0' || w[2] == '=') {
            const char *before = i > 0 ? words.items[i - 1] : "";
            /* The value of a secret's flag that begins with '-' (so it was not taken as the value):
             * the message names the flag, never the value. */
            if (!strchr(before, '=') && redact_secret_name(before, strlen(before)))
                rc = errbuf_set(err,
                                "RAYBOOT_RAY_START_ARGS: the value after %.80s begins with '-': join the two "
                                "with '=' into one word",
                                before);
            else
                rc = errbuf_set(err, "RAYBOOT_RAY_START_ARGS: '%.80s' is not a --flag", w);
            break;
        }
        /* "--name value": ray start takes no positional arguments, so a word that is not a flag
         * can only be the value of the flag before it. */
        if (!strchr(w, '=') && i + 1 < words.len && words.items[i + 1][0] != '-') {
            if (snprintf(joined, sizeof(joined), "%s=%s", w, words.items[i + 1]) >= (int)sizeof(joined)) {
                rc = errbuf_set(err, "RAYBOOT_RAY_START_ARGS: the value of %.80s is too long", w);
                break;
            }
            w = joined;
            i++;
        }
        if (apply_user_flag(in, argv, w, warnings) < 0)
            rc = errbuf_set(err, "out of memory");
    }
    strv_free(&words);
    return rc;
}

int raystart_build(const struct raystart_input *in, struct strv *argv, struct strv *warnings, struct errbuf *err)
{
    int rc = 0;
    rc |= strv_push(argv, in->ray);
    rc |= strv_push(argv, "start");
    if (in->head) {
        rc |= strv_push(argv, "--head");
        rc |= strv_pushf(argv, "--port=%d", in->port);
        rc |= strv_push(argv, "--dashboard-host=0.0.0.0");
        rc |= strv_pushf(argv, "--dashboard-port=%d", in->dashboard_port);
        rc |= strv_pushf(argv, "--ray-client-server-port=%d", in->client_port);
    } else {
        rc |= strv_pushf(argv, "--address=%s:%d", in->head_fqdn, in->port);
    }
    if (in->node_ip)
        rc |= strv_pushf(argv, "--node-ip-address=%s", in->node_ip);
    if (in->metrics_export_port > 0)
        rc |= strv_pushf(argv, "--metrics-export-port=%d", in->metrics_export_port);
    if (in->node_name && in->node_name[0])
        rc |= strv_pushf(argv, "--node-name=%s", in->node_name);
    if (in->num_cpus > 0)
        rc |= strv_pushf(argv, "--num-cpus=%ld", in->num_cpus);
    if (in->memory_bytes > 0)
        rc |= strv_pushf(argv, "--memory=%llu", in->memory_bytes);
    if (in->num_gpus >= 0)
        rc |= strv_pushf(argv, "--num-gpus=%ld", in->num_gpus);
    rc |= strv_push(argv, "--block");
    if (rc)
        return errbuf_set(err, "out of memory");
    if (in->user_args && apply_user_args(in, argv, warnings, err) < 0)
        return -1;
    return 0;
}

const char *raystart_flag_value(const struct strv *argv, const char *name)
{
    size_t len = strlen(name);
    for (size_t i = 2; i < argv->len; i++) {
        if (strncmp(argv->items[i], name, len) == 0 && argv->items[i][len] == '=')
            return argv->items[i] + len + 1;
    }
    return NULL;
}
