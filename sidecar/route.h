/* Which of the sidecar's endpoints a request is for, from the port it came to, its method and path
 * alone: pure, so it can be unit-tested and fuzzed. What each endpoint answers is endpoints.c's. */
#ifndef RAYBOOT_SIDECAR_ROUTE_H
#define RAYBOOT_SIDECAR_ROUTE_H

/* The sidecar's two listeners. */
enum route_port {
    ROUTE_PORT_PROBES, /* every address: what the kubelet's probes and a metrics scraper reach */
    ROUTE_PORT_DRAIN,  /* 127.0.0.1 only: reached from inside the pod alone */
};

enum route {
    ROUTE_DRAIN,           /* POST /drain on the drain port, whatever its query */
    ROUTE_DRAIN_METHOD,    /* /drain on the drain port with another method (HEAD and GET included): 405 */
    ROUTE_DRAIN_ELSEWHERE, /* /drain on the probes port, any method: 403, nothing drained */
    ROUTE_HELLO,           /* GET or HEAD /hello on the drain port: the sidecar says (and proves) it is there */
    ROUTE_HEALTHZ,         /* GET or HEAD, probes port */
    ROUTE_READYZ,
    ROUTE_METRICS,
    ROUTE_WRONG_METHOD,   /* /healthz, /readyz or /metrics with a method other than GET or HEAD: 405 */
    ROUTE_NOT_FOUND,      /* GET or HEAD of any other path: 404 */
    ROUTE_NOT_FOUND_OTHER /* another method on any other path: 404 */
};

enum route route_request(enum route_port port, const char *method, const char *path);

#endif
