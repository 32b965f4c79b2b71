/* libFuzzer target: lib/plan/raystart.c on any RAYBOOT_RAY_START_ARGS (words or a JSON array). Input:
 * the first byte's low bit picks head or worker, the rest is the variable's value. The argv must
 * start "ray start", hold each flag name once, every user word as a --flag, and keep --block
 * last; a worker must get no head-only flag, a head no --address. */
#include <string.h>

#include "fuzz.h"
#include "raystart.h"

/* Flag name length of "--name=value". */
static size_t name_len(const char *arg)
{
    return strcspn(arg, "=");
}

static int named(const char *arg, const char *name)
{
    return name_len(arg) == strlen(name) && strncmp(arg, name, name_len(arg)) == 0;
}

static void check(const struct strv *argv, int head)
{
    if (argv->len < 3 || strcmp(argv->items[0], "ray") != 0 || strcmp(argv->items[1], "start") != 0 ||
        !named(argv->items[argv->len - 1], "--block"))
        __builtin_trap();
    for (size_t i = 2; i < argv->len; i++) {
        const char *a = argv->items[i];
        if (strncmp(a, "--", 2) != 0 || name_len(a) <= 2)
            __builtin_trap();
        for (size_t j = 2; j < i; j++) {
            if (name_len(argv->items[j]) == name_len(a) && strncmp(argv->items[j], a, name_len(a)) == 0)
                __builtin_trap();
        }
        /* facts/ray.md: a worker's ray start aborts on these; a head takes --address as Redis. */
        if (!head && (named(a, "--head") || named(a, "--port") || named(a, "--dashboard-port") ||
                      named(a, "--ray-client-server-port") || named(a, "--include-dashboard")))
            __builtin_trap();
        if (head && named(a, "--address"))
            __builtin_trap();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct raystart_input in;
    struct strv argv, warnings;
    struct errbuf err;
    char *args;

    if (size == 0)
        return 0;
    args = fuzz_strndup(data + 1, size - 1);
    memset(&in, 0, sizeof(in));
    in.ray = "ray";
    in.head = data[0] & 1;
    in.head_fqdn = "j-head-0.j.ns.svc.cluster.local";
    in.node_ip = (data[0] & 2) ? "10.244.1.5" : NULL;
    in.port = 6379;
    in.dashboard_port = 8265;
    in.client_port = 10001;
    in.num_cpus = (data[0] & 4) ? 4 : 0;
    in.memory_bytes = (data[0] & 8) ? 8ULL << 30 : 0;
    in.num_gpus = (data[0] & 16) ? 2 : -1;
    in.user_args = args;
    strv_init(&argv);
    strv_init(&warnings);
    if (raystart_build(&in, &argv, &warnings, &err) == 0)
        check(&argv, in.head);
    else if (!fuzz_terminated(err.msg, sizeof(err.msg)))
        __builtin_trap();
    strv_free(&argv);
    strv_free(&warnings);
    free(args);
    return 0;
}
