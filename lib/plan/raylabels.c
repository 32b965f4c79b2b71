/* Which node labels a pod's Ray gets, and whether it gets them: rayboot's (the platform, role,
 * job, task, index, LeaderWorkerSet group, pod), the user's on top, and the version gate. The
 * syntax is labelsyntax.c's, the version rayversion.c's; the rest of `ray start` is raystart.c's. */
#include "raylabels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dotversion.h"
#include "env.h"
#include "labelsyntax.h"
#include "raystart.h"

/* The platform that placed the pod, even when RAYBOOT_ROLE made the source "explicit". */
static const char *platform(const struct plan *p)
{
    if (p->source != PLAN_SOURCE_EXPLICIT)
        return plan_source_name(p->source);
    if (p->ntasks > 0)
        return "volcano";
    if (p->lws.found)
        return "lws";
    if (p->jobset.found)
        return "jobset";
    return "explicit";
}

/* One of ours, when it has a value Ray takes (a pod name can be longer than 63 bytes). */
static int add_ours(struct plan *p, const char *name, const char *value, struct errbuf *err)
{
    const char *why = labelsyntax_check_value(value);
    if (!value[0])
        return 0;
    if (why)
        return plan_warn(p, err, "node label %s%s=%.80s left out: %s", RAYLABELS_PREFIX, name, value, why);
    if (strv_pushf(&p->labels.labels, "%s%s=%s", RAYLABELS_PREFIX, name, value) < 0)
        return errbuf_set(err, "out of memory");
    return 0;
}

static int add_all_ours(struct plan *p, struct errbuf *err)
{
    char index[24] = "";
    if (p->index >= 0)
        snprintf(index, sizeof(index), "%ld", p->index);
    if (add_ours(p, "platform", platform(p), err) < 0 || add_ours(p, "role", plan_role_name(p->role), err) < 0 ||
        add_ours(p, "job", p->job, err) < 0 || add_ours(p, "task", p->task, err) < 0 ||
        add_ours(p, "index", index, err) < 0 || add_ours(p, "lws-group", p->lws.found ? p->lws.group : "", err) < 0 ||
        add_ours(p, "pod", p->pod_name, err) < 0)
        return -1;
    return 0;
}

/* The user's labels over ours: a key of ours they give takes their value, said in a note. */
static int merge_user(struct plan *p, const struct strv *user, struct errbuf *err)
{
    for (size_t i = 0; i < user->len; i++) {
        const char *pair = user->items[i];
        size_t klen = strcspn(pair, "=");
        long at = labelsyntax_find(&p->labels.labels, pair, klen);
        int rc;
        if (at < 0) {
            rc = strv_push(&p->labels.labels, pair);
        } else {
            rc = strcmp(p->labels.labels.items[at], pair) == 0
                     ? 0
                     : strv_pushf(&p->labels.notes, "%s: %s replaces rayboot's %s", RAYLABELS_ENV, pair,
                                  p->labels.labels.items[at]);
            rc |= strv_replace(&p->labels.labels, (size_t)at, pair);
        }
        if (rc < 0)
            return errbuf_set(err, "out of memory");
    }
    return 0;
}

char *raylabels_join(const struct strv *labels)
{
    size_t len = 1, at = 0;
    char *out;
    for (size_t i = 0; i < labels->len; i++)
        len += strlen(labels->items[i]) + 1;
    out = calloc(1, len);
    for (size_t i = 0; out && i < labels->len; i++) {
        size_t n = strlen(labels->items[i]);
        if (i > 0)
            out[at++] = ',';
        memcpy(out + at, labels->items[i], n);
        at += n;
    }
    return out;
}

/* --labels=... before --block, which stays last where a reader expects it. */
static int add_flag(struct plan *p, struct errbuf *err)
{
    char *joined = raylabels_join(&p->labels.labels);
    struct strv *argv = &p->ray_start;
    int rc = joined ? strv_pushf(argv, "--labels=%s", joined) : -1;
    free(joined);
    if (rc < 0)
        return errbuf_set(err, "out of memory");
    if (argv->len >= 2 && strcmp(argv->items[argv->len - 2], "--block") == 0) {
        char *flag = argv->items[argv->len - 1];
        argv->items[argv->len - 1] = argv->items[argv->len - 2];
        argv->items[argv->len - 2] = flag;
    }
    p->labels.passed = true;
    return 0;
}

/* Why the labels are not passed: a note, or a warning when the user asked for labels. */
static int not_passed(struct plan *p, bool user_asked, const char *why, struct errbuf *err)
{
    if (user_asked)
        return plan_warn(p, err, "%s is not passed to ray start: %s", RAYLABELS_ENV, why);
    if (strv_pushf(&p->labels.notes, "node labels not passed to ray start: %s", why) < 0)
        return errbuf_set(err, "out of memory");
    return 0;
}

int raylabels_plan(const char *const *envp, const char *root, const char *ray, struct plan *p, struct errbuf *err)
{
    const char *text = env_lookup(envp, RAYLABELS_ENV);
    struct rayversion *v = &p->labels.ray;
    struct strv user;
    char why[RAYVERSION_PATH_MAX_BYTES + 96];
    int rc, gate;

    strv_init(&user);
    rc = text ? labelsyntax_parse(RAYLABELS_ENV, text, &user, err) : 0;
    if (rc == 0)
        rc = add_all_ours(p, err);
    if (rc == 0)
        rc = merge_user(p, &user, err);
    strv_free(&user);
    if (rc < 0)
        return -1;
    /* Whether the user gave labels decides how loud a skipped --labels is. */
    text = text && text[0] ? text : NULL;
    /* Read even when the labels are not rayboot's to pass: the token's check (init/run.c) asks too. */
    rayversion_read(root, envp, ray, v);
    if (raystart_flag_value(&p->ray_start, "--labels"))
        return not_passed(p, text != NULL,
                          "RAYBOOT_RAY_START_ARGS gives --labels, which Ray takes instead of rayboot's "
                          "(give yours in " RAYLABELS_ENV " to have both)",
                          err);
    gate = v->version[0] ? dotversion_at_least(v->version, RAYLABELS_MIN_MAJOR, RAYLABELS_MIN_MINOR) : -1;
    if (gate == 1)
        return add_flag(p, err);
    if (!v->version[0])
        snprintf(why, sizeof(why), "the version of Ray is unknown (%s)", v->why);
    else
        snprintf(why, sizeof(why), "Ray %s (%.400s) %s", v->version, v->from,
                 gate == 0 ? "takes no --labels (2.49 and later do)" : "is not a version rayboot can compare");
    return not_passed(p, text != NULL, why, err);
}
