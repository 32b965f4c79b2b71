/* libFuzzer target: the sidecar's request routing (sidecar/route.c), which its endpoints follow for
 * every request libmicrohttpd hands them. Input: the port on the first line ("drain" for the drain
 * port, anything else the probes port), the method on the second, the path on the third (a
 * fourth line, the `deadline` argument of older inputs, is ignored: the sidecar no longer reads
 * one). Every request must reach exactly one route; only POST /drain on the drain port drains; the
 * probes port never drains. */
#include <string.h>

#include "fuzz.h"
#include "route.h"

static void check(enum route_port port, const char *method, const char *path, enum route r)
{
    int get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
    int drain = strcmp(path, "/drain") == 0;
    int drain_port = port == ROUTE_PORT_DRAIN;

    switch (r) {
    case ROUTE_DRAIN:
        if (!drain_port || !drain || strcmp(method, "POST") != 0)
            __builtin_trap();
        break;
    case ROUTE_DRAIN_METHOD:
        if (!drain_port || !drain || strcmp(method, "POST") == 0)
            __builtin_trap();
        break;
    case ROUTE_DRAIN_ELSEWHERE:
        if (drain_port || !drain)
            __builtin_trap();
        break;
    case ROUTE_HELLO:
        if (!drain_port || !get || strcmp(path, "/hello") != 0)
            __builtin_trap();
        break;
    case ROUTE_HEALTHZ:
    case ROUTE_READYZ:
    case ROUTE_METRICS:
    case ROUTE_WRONG_METHOD:
        if (drain_port || drain || (r == ROUTE_WRONG_METHOD) == get)
            __builtin_trap();
        break;
    case ROUTE_NOT_FOUND:
    case ROUTE_NOT_FOUND_OTHER:
        if (drain || (r == ROUTE_NOT_FOUND) != get)
            __builtin_trap();
        break;
    default:
        __builtin_trap();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Zeroed: gcc's -fanalyzer cannot tie n to the lines fuzz_split filled, and calls lines[2] unset. */
    char *text = fuzz_strndup(data, size), *lines[4] = {NULL};
    size_t n = fuzz_split(text, '\n', lines, 4);
    enum route_port port = strcmp(lines[0], "drain") == 0 ? ROUTE_PORT_DRAIN : ROUTE_PORT_PROBES;
    const char *method = n > 1 ? lines[1] : "GET", *path = n > 2 ? lines[2] : "/";
    enum route r = route_request(port, method, path);
    check(port, method, path, r);
    free(text);
    return 0;
}
