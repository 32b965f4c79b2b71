/* Request routing for the sidecar's endpoints: a string match, kept apart from the sidecar's state
 * so that every method, path and deadline a client can send is fuzzed without a server. */
#include "route.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* deadline=SECONDS: whole seconds, 1..ROUTE_DEADLINE_MAX_S. */
static int parse_deadline(const char *text, long *ms)
{
    char *end;
    long v;
    errno = 0;
    v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < 1 || v > ROUTE_DEADLINE_MAX_S)
        return -1;
    *ms = v * 1000;
    return 0;
}

/* The paths that answer GET (and HEAD) only; ROUTE_NOT_FOUND for any other. */
static enum route get_only_route(const char *path)
{
    if (strcmp(path, "/healthz") == 0)
        return ROUTE_HEALTHZ;
    if (strcmp(path, "/readyz") == 0)
        return ROUTE_READYZ;
    if (strcmp(path, "/metrics") == 0)
        return ROUTE_METRICS;
    return ROUTE_NOT_FOUND;
}

enum route route_request(const char *method, const char *path, const char *deadline_arg, long *deadline_ms)
{
    bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
    bool post = strcmp(method, "POST") == 0;
    enum route r;

    if (strcmp(path, "/drain") == 0) {
        if (!get && !post)
            return ROUTE_DRAIN_METHOD;
        *deadline_ms = -1;
        if (deadline_arg && parse_deadline(deadline_arg, deadline_ms) < 0)
            return ROUTE_BAD_DEADLINE;
        return ROUTE_DRAIN;
    }
    r = get_only_route(path);
    if (!get)
        return r == ROUTE_NOT_FOUND ? ROUTE_NOT_FOUND_OTHER : ROUTE_WRONG_METHOD;
    return r;
}
