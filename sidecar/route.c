/* Request routing for the sidecar's endpoints: a string match, kept apart from the sidecar's state
 * so that every port, method, path and deadline a client can send is fuzzed without a server. */
#include "route.h"

#include <stdbool.h>
#include <string.h>

#include "number.h"

/* deadline=SECONDS: whole seconds, 1..ROUTE_DEADLINE_MAX_S. */
static int parse_deadline(const char *text, long *ms)
{
    long v;
    if (number_parse(text, strlen(text), 1, ROUTE_DEADLINE_MAX_S, &v) < 0)
        return -1;
    *ms = v * 1000;
    return 0;
}

/* The drain port has one endpoint, POST /drain: a drain changes the cluster, so neither HEAD
 * (which a client may send for anything) nor GET (which must be safe to repeat) makes one. */
static enum route drain_port_route(const char *method, const char *path, const char *deadline_arg, long *deadline_ms)
{
    if (strcmp(path, "/drain") != 0)
        return strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0 ? ROUTE_NOT_FOUND : ROUTE_NOT_FOUND_OTHER;
    if (strcmp(method, "POST") != 0)
        return ROUTE_DRAIN_METHOD;
    *deadline_ms = -1;
    if (deadline_arg && parse_deadline(deadline_arg, deadline_ms) < 0)
        return ROUTE_BAD_DEADLINE;
    return ROUTE_DRAIN;
}

/* The probes port: GET (and HEAD) of the probes and /metrics; /drain is not served there. */
static enum route probes_port_route(const char *method, const char *path)
{
    bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
    enum route r = ROUTE_NOT_FOUND;
    if (strcmp(path, "/drain") == 0)
        return ROUTE_DRAIN_ELSEWHERE;
    if (strcmp(path, "/healthz") == 0)
        r = ROUTE_HEALTHZ;
    else if (strcmp(path, "/readyz") == 0)
        r = ROUTE_READYZ;
    else if (strcmp(path, "/metrics") == 0)
        r = ROUTE_METRICS;
    if (!get)
        return r == ROUTE_NOT_FOUND ? ROUTE_NOT_FOUND_OTHER : ROUTE_WRONG_METHOD;
    return r;
}

enum route route_request(enum route_port port, const char *method, const char *path, const char *deadline_arg,
                         long *deadline_ms)
{
    if (port == ROUTE_PORT_DRAIN)
        return drain_port_route(method, path, deadline_arg, deadline_ms);
    return probes_port_route(method, path);
}
