/* Request routing for the sidecar's endpoints: a string match, kept apart from the sidecar's state
 * so that every port, method and path a client can send is fuzzed without a server. */
#include "route.h"

#include <stdbool.h>
#include <string.h>

/* The drain port has two endpoints: GET /hello, which changes nothing (the client's quick look that
 * the sidecar is the one listening), and POST /drain: a drain changes the cluster, so neither HEAD
 * (which a client may send for anything) nor GET (which must be safe to repeat) makes one. Its
 * query is not read: the drain's deadline is the sidecar's own (an older client sends
 * ?deadline=N, and any caller could). */
static enum route drain_port_route(const char *method, const char *path)
{
    bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
    if (strcmp(path, "/hello") == 0)
        return get ? ROUTE_HELLO : ROUTE_NOT_FOUND_OTHER;
    if (strcmp(path, "/drain") != 0)
        return get ? ROUTE_NOT_FOUND : ROUTE_NOT_FOUND_OTHER;
    if (strcmp(method, "POST") != 0)
        return ROUTE_DRAIN_METHOD;
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

enum route route_request(enum route_port port, const char *method, const char *path)
{
    if (port == ROUTE_PORT_DRAIN)
        return drain_port_route(method, path);
    return probes_port_route(method, path);
}
