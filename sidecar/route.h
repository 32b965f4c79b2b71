/* Which of the sidecar's endpoints a request is for, from its method, path and deadline argument
 * alone: pure, so it can be unit-tested and fuzzed. What each endpoint answers is endpoints.c's. */
#ifndef RAYBOOT_SIDECAR_ROUTE_H
#define RAYBOOT_SIDECAR_ROUTE_H

/* A preStop hook's deadline in whole seconds; an hour is far past any grace period. */
#define ROUTE_DEADLINE_MAX_S 3600

enum route {
    ROUTE_DRAIN,          /* GET, HEAD or POST /drain (with a good deadline, if any) */
    ROUTE_BAD_DEADLINE,   /* /drain?deadline= that is not whole seconds 1..ROUTE_DEADLINE_MAX_S: 400 */
    ROUTE_DRAIN_METHOD,   /* /drain with another method: 405 */
    ROUTE_HEALTHZ,        /* GET or HEAD */
    ROUTE_READYZ,
    ROUTE_METRICS,
    ROUTE_WRONG_METHOD,   /* /healthz, /readyz or /metrics with a method other than GET or HEAD: 405 */
    ROUTE_NOT_FOUND,      /* GET or HEAD of any other path: 404 */
    ROUTE_NOT_FOUND_OTHER /* another method on any other path: 404 */
};

/* deadline_arg is the request's `deadline` query argument, or NULL. For ROUTE_DRAIN, *deadline_ms
 * gets it in milliseconds, or -1 when it was not given. */
enum route route_request(const char *method, const char *path, const char *deadline_arg, long *deadline_ms);

#endif
