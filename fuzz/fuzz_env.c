/* libFuzzer target: the planner on any environment (lib/plan/plan.c with lib/base/env.c, lib/plan/settings.c,
 * lib/plan/pluginargs.c, lib/net/address.c, lib/plan/raystart.c, the node labels (lib/plan/raylabels.c, labelsyntax.c)
 * and the VC_*_HOSTS path of lib/plan/volcano.c), rendered as `rayboot plan` prints it (init/plan_render.c). Input: one
 * KEY=VALUE per line, as in tests/fixtures/pods/<case>/env. RAYBOOT_ROOT points nowhere, so the plan depends on the
 * environment alone. A plan that is made must render as JSON that parses, with ray_start[1]
 * "start" and a head port in 1..65535; a refusal must come with a message. */
#include <string.h>

#include <cjson/cJSON.h>

#include "fuzz.h"
#include "plan.h"
#include "plan_render.h"
#include "settings.h"

/* Far more variables than a pod has that rayboot reads. */
#define FUZZ_VARS_MAX 128

/* Checks the JSON plan the way a user's tooling reads it. */
static void check_json(const char *json, bool submitter)
{
    cJSON *o = cJSON_Parse(json);
    const cJSON *rs = cJSON_GetObjectItemCaseSensitive(o, "ray_start");
    const cJSON *head = cJSON_GetObjectItemCaseSensitive(o, "head");
    const cJSON *port = cJSON_GetObjectItemCaseSensitive(head, "port");
    const cJSON *start = cJSON_GetArrayItem(rs, 1);
    if (!cJSON_IsObject(o) || !cJSON_IsArray(rs) || !cJSON_IsNumber(port) || port->valuedouble < 1 ||
        port->valuedouble > 65535)
        __builtin_trap();
    /* A submitter runs no Ray node: its ray_start is empty. */
    if (!submitter && (!cJSON_IsString(start) || strcmp(start->valuestring, "start") != 0))
        __builtin_trap();
    cJSON_Delete(o);
}

/* workers_expected, when Volcano's lists decided it, is the sum of the counted tasks' hosts. */
static void check_evidence(const struct plan *p)
{
    long sum = 0;
    for (size_t i = 0; i < p->ntasks; i++)
        sum += p->tasks[i].kind == PLAN_TASK_WORKER ? p->tasks[i].hosts : 0;
    if (p->workers_from && (strcmp(p->workers_from, "volcano") == 0 || strcmp(p->workers_from, "--worker") == 0) &&
        sum != p->workers_expected)
        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_strndup(data, size), *lines[FUZZ_VARS_MAX];
    const char *envp[FUZZ_VARS_MAX + 2];
    static char python[] = "python", train[] = "train.py";
    char *command[] = {python, train, NULL};
    size_t n = fuzz_split(text, '\n', lines, FUZZ_VARS_MAX);
    struct plugin_args pa;
    struct settings st;
    struct plan plan;
    struct errbuf err;
    struct plan_input in;

    /* The first match wins in env_lookup: this one shadows any RAYBOOT_ROOT in the input. */
    envp[0] = "RAYBOOT_ROOT=/nonexistent/rayboot-fuzz";
    for (size_t i = 0; i < n; i++)
        envp[i + 1] = lines[i];
    envp[n + 1] = NULL;

    if (settings_load(envp, &st, &err) == 0) {
        if (st.wait_timeout_ms < 0 || st.workers_timeout_ms < 0 || st.grace_period_ms < 0 ||
            st.head_loss_timeout_ms < 0 || st.eviction_exit_code < 0 || st.eviction_exit_code > 255)
            __builtin_trap();
    } else if (!fuzz_terminated(err.msg, sizeof(err.msg))) {
        __builtin_trap();
    }
    if (plan_plugin_args(envp, &pa, &err) < 0) {
        if (!fuzz_terminated(err.msg, sizeof(err.msg)))
            __builtin_trap();
        free(text);
        return 0;
    }
    err.msg[0] = '\0';
    memset(&in, 0, sizeof(in));
    in.envp = envp;
    in.plugin = &pa;
    in.hostname = "fuzz-pod-0";
    in.command = command;
    in.command_argc = 2;
    in.check_shm = false;
    if (plan_build(&in, &plan, &err) == 0) {
        char *json = plan_render_json(&plan), *summary = plan_render_text(&plan);
        bool submitter = plan.role == PLAN_ROLE_SUBMITTER;
        if (!json || !summary || (!submitter && plan.ray_start.len < 2) || plan.command.len != 2)
            __builtin_trap();
        check_json(json, submitter);
        check_evidence(&plan);
        free(json);
        free(summary);
    } else if (!fuzz_terminated(err.msg, sizeof(err.msg)) || err.msg[0] == '\0') {
        __builtin_trap();
    }
    plan_free(&plan);
    free(text);
    return 0;
}
