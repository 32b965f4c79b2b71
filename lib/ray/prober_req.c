/* The request builders: every field a request's op reads, and nothing else, set from the
 * caller's values (cut to the fields' sizes). */
#include "prober_req.h"

#include <stdio.h>
#include <string.h>

static struct prober_request request(int op, const char *addr, int port, long budget_ms)
{
    struct prober_request req;
    memset(&req, 0, sizeof(req));
    req.op = op;
    req.port = port;
    req.budget_ms = budget_ms;
    if (addr)
        snprintf(req.addr, sizeof(req.addr), "%s", addr);
    return req;
}

/* A request about one name: a host to resolve, a node's address, a KV key. */
static struct prober_request named(int op, const char *addr, int port, const char *name, long budget_ms)
{
    struct prober_request req = request(op, addr, port, budget_ms);
    snprintf(req.name, sizeof(req.name), "%s", name);
    return req;
}

struct prober_request prober_req_resolve(const char *name, long budget_ms)
{
    return named(PROBE_RESOLVE, NULL, 0, name, budget_ms);
}

struct prober_request prober_req_tcp(const char *addr, int port, long budget_ms)
{
    return request(PROBE_TCP, addr, port, budget_ms);
}

struct prober_request prober_req_health(const char *addr, int port, long budget_ms)
{
    return request(PROBE_HEALTH, addr, port, budget_ms);
}

struct prober_request prober_req_nodes(const char *addr, int port, long budget_ms)
{
    return request(PROBE_COUNT_NODES, addr, port, budget_ms);
}

struct prober_request prober_req_find_node(const char *addr, int port, const char *node_name, long budget_ms)
{
    return named(PROBE_FIND_NODE, addr, port, node_name, budget_ms);
}

struct prober_request prober_req_drain(const char *addr, int port, const char *node_name, const char *reason,
                                       long long deadline_unix_ms, long budget_ms)
{
    struct prober_request req = named(PROBE_DRAIN, addr, port, node_name, budget_ms);
    snprintf(req.text, sizeof(req.text), "%s", reason);
    req.deadline_unix_ms = deadline_unix_ms;
    return req;
}

struct prober_request prober_req_departure(const char *addr, int port, const char *node_name, long budget_ms)
{
    return named(PROBE_DEPARTURE, addr, port, node_name, budget_ms);
}

struct prober_request prober_req_ray_version(const char *addr, int port, long budget_ms)
{
    return request(PROBE_RAY_VERSION, addr, port, budget_ms);
}

struct prober_request prober_req_cluster_id(const char *addr, int port, long budget_ms)
{
    return request(PROBE_CLUSTER_ID, addr, port, budget_ms);
}

struct prober_request prober_req_kv_get(const char *addr, int port, const char *key, long budget_ms)
{
    return named(PROBE_KV_GET, addr, port, key, budget_ms);
}

struct prober_request prober_req_kv_put(const char *addr, int port, const char *key, const char *value, long budget_ms)
{
    struct prober_request req = named(PROBE_KV_PUT, addr, port, key, budget_ms);
    snprintf(req.text, sizeof(req.text), "%s", value);
    return req;
}

struct prober_request prober_req_wait_gcs(const char *name, int port, int rendezvous_port, long timeout_ms, unsigned id,
                                          unsigned long long seed)
{
    struct prober_request req = named(PROBE_WAIT_GCS, NULL, port, name, timeout_ms);
    req.wait.id = id;
    req.wait.rendezvous_port = rendezvous_port;
    req.wait.seed = seed;
    return req;
}

struct prober_request prober_req_cancel(void)
{
    return request(PROBE_CANCEL, NULL, 0, 0);
}
