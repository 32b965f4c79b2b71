/* libFuzzer target: the sidecar's request routing (sidecar/route.c), which endpoints_answer
 * follows for every request libmicrohttpd hands it. Input: the method on the first line, the
 * path on the second, the `deadline` query argument on the third (absent: no argument). Every
 * request must reach exactly one route; a drain's deadline must be within 1 s..1 h or absent. */
#include <string.h>

#include "fuzz.h"
#include "route.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_strndup(data, size), *lines[3];
    size_t n = fuzz_split(text, '\n', lines, 3);
    const char *method = lines[0], *path = n > 1 ? lines[1] : "/", *deadline = n > 2 ? lines[2] : NULL;
    long deadline_ms = 12345;
    enum route r = route_request(method, path, deadline, &deadline_ms);
    int get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
    int drain = strcmp(path, "/drain") == 0;

    switch (r) {
    case ROUTE_DRAIN:
        if (!drain || (deadline ? deadline_ms < 1000 || deadline_ms > ROUTE_DEADLINE_MAX_S * 1000L : deadline_ms != -1))
            __builtin_trap();
        break;
    case ROUTE_BAD_DEADLINE:
        if (!drain || !deadline)
            __builtin_trap();
        break;
    case ROUTE_DRAIN_METHOD:
        if (!drain || get || strcmp(method, "POST") == 0)
            __builtin_trap();
        break;
    case ROUTE_HEALTHZ:
    case ROUTE_READYZ:
    case ROUTE_METRICS:
    case ROUTE_NOT_FOUND:
        if (!get || drain)
            __builtin_trap();
        break;
    case ROUTE_WRONG_METHOD:
    case ROUTE_NOT_FOUND_OTHER:
        if (get || drain)
            __builtin_trap();
        break;
    default:
        __builtin_trap();
    }
    free(text);
    return 0;
}
