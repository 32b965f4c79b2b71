/* The prober's own side, in the forked child: it sheds what it inherited, sets up DNS, libcurl and
 * Ray's token, confines itself (seccomp), then serves the parent's requests one at a time until
 * the parent goes. The parent's side (start, ask, stop) is prober.c; what to probe and when is the
 * waiting code's. */
#include "prober_child.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "address.h"
#include "deadline.h"
#include "gcs.h"
#include "gcswait_loop.h"
#include "grpc.h"
#include "rayauth.h"
#include "raytls.h"
#include "rdvauth.h"
#include "sandbox.h"
#include "scrub.h"
#include "secrets.h"

extern char **environ;

/* A TCP connect to a live port answers in a round trip; past this the SYN was dropped. */
#define PROBE_TCP_TIMEOUT_MS 500
/* Test hook: makes the confined prober call a syscall outside its allowlist, so that tests can
 * prove the filter kills it and the parent says so. */
#define PROBER_SELFTEST_ENV "RAYBOOT_PROBER_SELFTEST"

/* 0 when addr:port accepts a connection, -1 with why not. */
static int tcp_probe(const char *addr, int port, long timeout_ms, struct errbuf *err)
{
    struct sockaddr_storage ss;
    socklen_t len;
    struct pollfd pfd;
    int fd, sock_err = 0, rc;

    if (address_sockaddr(addr, port, &ss, &len, err) < 0)
        return -1;
    fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return errbuf_set(err, "socket: %s", strerror(errno));
    rc = connect(fd, (struct sockaddr *)&ss, len);
    if (rc < 0 && errno == EINPROGRESS) {
        pfd.fd = fd;
        pfd.events = POLLOUT;
        rc = poll(&pfd, 1, (int)timeout_ms);
        if (rc == 0) {
            close(fd);
            return errbuf_set(err, "timeout (no answer to the TCP connect)");
        }
        len = sizeof(sock_err);
        if (rc < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &sock_err, &len) < 0)
            sock_err = errno;
    } else if (rc < 0) {
        sock_err = errno;
    }
    close(fd);
    if (sock_err)
        return errbuf_set(err, "%s", sock_err == ECONNREFUSED ? GCSWAIT_CONNECTION_REFUSED : strerror(sock_err));
    return 0;
}

static void hex(const uint8_t *data, size_t len, char *out, size_t cap)
{
    for (size_t i = 0; i < len && 2 * i + 2 < cap; i++)
        snprintf(out + 2 * i, 3, "%02x", data[i]);
}

static enum prober_status absent_node(const struct prober_request *req, struct errbuf *err)
{
    errbuf_set(err, "no ALIVE node named %s in the GCS", req->name);
    return PROBER_ABSENT;
}

/* The drained node's id goes back in value, hex, for the caller's report. */
static enum prober_status serve_drain(const struct prober_request *req, struct prober_reply *reply,
                                      struct grpc_client *grpc, enum gcs_nodes_form form, struct errbuf *err)
{
    uint8_t id[GCS_NODE_ID_BYTES];
    bool found;
    if (gcs_find_node(grpc, req->addr, req->port, form, req->name, id, &found, err) < 0)
        return PROBER_FAILED;
    if (!found)
        return absent_node(req, err); /* it left already: not a GCS that failed */
    hex(id, sizeof(id), reply->value, sizeof(reply->value));
    if (gcs_drain_node(grpc, req->addr, req->port, id, req->text, req->deadline_unix_ms, err) < 0)
        return PROBER_FAILED;
    return PROBER_OK;
}

static enum prober_status serve_find_node(const struct prober_request *req, struct grpc_client *grpc,
                                          enum gcs_nodes_form form, struct errbuf *err)
{
    uint8_t id[GCS_NODE_ID_BYTES];
    bool found;
    if (gcs_find_node(grpc, req->addr, req->port, form, req->name, id, &found, err) < 0)
        return PROBER_FAILED;
    return found ? PROBER_OK : absent_node(req, err);
}

static enum prober_status serve_cluster_id(const struct prober_request *req, struct prober_reply *reply,
                                           struct grpc_client *grpc, struct errbuf *err)
{
    uint8_t id[GCS_CLUSTER_ID_MAX_BYTES];
    size_t len;
    if (gcs_cluster_id(grpc, req->addr, req->port, id, &len, err) < 0)
        return PROBER_FAILED;
    hex(id, len, reply->value, sizeof(reply->value));
    return PROBER_OK;
}

static enum prober_status serve_kv_get(const struct prober_request *req, struct prober_reply *reply,
                                       struct grpc_client *grpc, struct errbuf *err)
{
    bool found;
    if (gcs_kv_get(grpc, req->addr, req->port, req->name, reply->value, sizeof(reply->value), &found, err) < 0)
        return PROBER_FAILED;
    if (!found) {
        errbuf_set(err, "no key %s", req->name);
        return PROBER_ABSENT;
    }
    return PROBER_OK;
}

/* The GCS (in token mode) refused the call for its token: which one to fix. */
static void unauthenticated(struct prober_reply *reply, const struct grpc_client *grpc, struct errbuf *err)
{
    reply->status = PROBER_UNAUTHENTICATED;
    errbuf_prefix(err,
                  "the GCS refused %s (gRPC UNAUTHENTICATED): give this pod the cluster's token in RAY_AUTH_TOKEN "
                  "or RAY_AUTH_TOKEN_PATH",
                  grpc->auth_header[0] ? "this pod's token" : "a call without a token (this pod found none)");
}

/* 0 (done) or -1 (not) from a gcs_ or dns_ call, as a reply status. */
static enum prober_status done(int rc)
{
    return rc == 0 ? PROBER_OK : PROBER_FAILED;
}

/* The version goes back in value; from then on nodes are asked for in its form. */
static enum prober_status serve_ray_version(const struct prober_request *req, struct prober_reply *reply,
                                            struct grpc_client *grpc, enum gcs_nodes_form *form, struct errbuf *err)
{
    char version[GCS_RAY_VERSION_MAX_BYTES];
    if (gcs_ray_version(grpc, req->addr, req->port, version, err) < 0)
        return PROBER_FAILED;
    *form = gcs_nodes_form_for(version);
    snprintf(reply->value, sizeof(reply->value), "%s", version);
    return PROBER_OK;
}

/* form: how GetAllNodeInfo is asked, kept across requests (the newest until PROBE_RAY_VERSION). */
static void serve(const struct prober_request *req, struct prober_reply *reply, struct dns_resolver *dns,
                  struct grpc_client *grpc, enum gcs_nodes_form *form)
{
    struct errbuf err;
    struct gcs_node_counts counts = {0, 0, 0};
    memset(reply, 0, sizeof(reply[0]));
    err.msg[0] = '\0';
    grpc->budget_ms = req->budget_ms;
    grpc->last_grpc_status = -1; /* a DNS or TCP request makes no call: no status from the last one */
    switch (req->op) {
    case PROBE_RESOLVE:
        reply->status = done(dns_resolve(dns, req->name, req->budget_ms, reply->addr, &err));
        break;
    case PROBE_TCP:
        reply->status =
            done(tcp_probe(req->addr, req->port, deadline_cap_ms(PROBE_TCP_TIMEOUT_MS, req->budget_ms), &err));
        break;
    case PROBE_HEALTH:
        reply->status = done(gcs_health_check(grpc, req->addr, req->port, &err));
        break;
    case PROBE_COUNT_NODES:
        reply->status = done(gcs_count_nodes(grpc, req->addr, req->port, *form, &counts, &err));
        reply->alive = counts.alive;
        reply->alive_workers = counts.alive_workers;
        reply->draining_workers = counts.draining_workers;
        break;
    case PROBE_DRAIN:
        reply->status = serve_drain(req, reply, grpc, *form, &err);
        break;
    case PROBE_DEPARTURE:
        reply->status = done(gcs_node_departure(grpc, req->addr, req->port, *form, req->name, &reply->departure,
                                                &reply->departed_ms, &err));
        break;
    case PROBE_FIND_NODE:
        reply->status = serve_find_node(req, grpc, *form, &err);
        break;
    case PROBE_RAY_VERSION:
        reply->status = serve_ray_version(req, reply, grpc, form, &err);
        break;
    case PROBE_CLUSTER_ID:
        reply->status = serve_cluster_id(req, reply, grpc, &err);
        break;
    case PROBE_KV_GET:
        reply->status = serve_kv_get(req, reply, grpc, &err);
        break;
    case PROBE_KV_PUT:
        reply->status = done(gcs_kv_put(grpc, req->addr, req->port, req->name, req->text, &err));
        break;
    default:
        errbuf_set(&err, "unknown request %d", req->op);
        reply->status = PROBER_FAILED;
    }
    if (reply->status == PROBER_FAILED && grpc->last_grpc_status == GRPC_STATUS_UNAUTHENTICATED)
        unauthenticated(reply, grpc, &err);
    if (reply->status != PROBER_OK)
        memcpy(reply->reason, err.msg, sizeof(reply->reason));
}

/* The calls a wait for the GCS makes (lib/ray/gcswait.c), on the prober's resolver and client. */
struct wait_ctx {
    struct dns_resolver *dns;
    struct grpc_client *grpc;
};

static int wait_resolve(void *ctx, const char *name, long budget_ms, char addr[DNS_ADDR_MAX_BYTES], struct errbuf *err)
{
    return dns_resolve(((struct wait_ctx *)ctx)->dns, name, budget_ms, addr, err);
}

static int wait_tcp(void *ctx, const char *addr, int port, long budget_ms, struct errbuf *err)
{
    (void)ctx;
    return tcp_probe(addr, port, deadline_cap_ms(PROBE_TCP_TIMEOUT_MS, budget_ms), err);
}

static int wait_health(void *ctx, const char *addr, int port, long budget_ms, struct errbuf *err)
{
    struct grpc_client *grpc = ((struct wait_ctx *)ctx)->grpc;
    grpc->budget_ms = budget_ms;
    return gcs_health_check(grpc, addr, port, err);
}

/* The rendezvous' key from Ray's token (rdvauth.h), made while the token is read; NULL in
 * gcswait_io without one. */
static struct hmac_sha256_key rdv_key;
static bool have_rdv_key;

/* Ray's TLS (raytls.h), read once for every call the prober makes; tls.on false without it. */
static struct raytls tls;

/* With TLS the prober does what the sidecar's API reader does: mbedTLS draws randomness
 * (getrandom, deps/mbedtls_entropy.c) for every handshake, and its PSA generator compares getpid
 * with the seeding process's on every draw. The rules' names start with "tls-", so that a knockout
 * build drops them from here only (contract/test_ray_tls.py::test_tls_prober_rule_is_needed). */
static int confine_for_tls(struct errbuf *err)
{
    const struct sandbox_rule more[] = {SANDBOX_ALLOW_AS("tls-getrandom", getrandom),
                                        SANDBOX_ALLOW_AS("tls-getpid", getpid)};
    return sandbox_confine_prober_and(more, sizeof(more) / sizeof(more[0]), err);
}

/* Set-up that opens files (c-ares reads its configuration and environment, libcurl makes its
 * first transfer), then what the prober must not carry into confinement: the environment (the
 * user's secrets; read by then) is overwritten. Descriptors it did not open (the parent's
 * listening and client sockets, its signalfd and epoll) were closed first, so none of the set-up's
 * own is lost. */
static int prepare(struct dns_resolver *dns, struct grpc_client *grpc, const char *root, struct errbuf *err)
{
    struct rayauth auth;
    if (raytls_load_here((const char *const *)environ, &tls, err) < 0 || dns_resolver_init(dns, root, err) < 0 ||
        grpc_client_init(grpc, tls.on ? &tls.tls : NULL, err) < 0 ||
        rayauth_load((const char *const *)environ, root, &auth, err) < 0)
        return -1;
    _Static_assert(sizeof(grpc->auth_header) == sizeof(auth.header), "grpc.h's header bound is rayauth.h's");
    memcpy(grpc->auth_header, auth.header, sizeof(grpc->auth_header)); /* the one copy it keeps */
    have_rdv_key = auth.token_mode && rdvauth_key_from_header(&rdv_key, auth.header) == 0;
    rayauth_clear(&auth);
    if (secrets_shed(err) < 0)
        return -1;
    return tls.on ? confine_for_tls(err) : sandbox_confine_prober(err);
}

void prober_child_main(int fd, const char *root)
{
    struct dns_resolver dns;
    struct grpc_client grpc;
    struct errbuf err;
    struct prober_request req;
    struct prober_reply reply;
    enum gcs_nodes_form form = GCS_NODES_SELECTORS;
    const char *selftest = getenv(PROBER_SELFTEST_ENV);
    bool forbidden_call = selftest && strcmp(selftest, "forbidden-syscall") == 0; /* read before the scrub */

    fd = scrub_fds(fd);
    if (fd < 0)
        _exit(1); /* the parent sees the socket close: "the prober exited with status 1" */
    memset(&reply, 0, sizeof(reply));
    if (prepare(&dns, &grpc, root, &err) < 0) {
        /* The parent reads this as the reason start-up failed. */
        reply.status = PROBER_FAILED;
        memcpy(reply.reason, err.msg, sizeof(reply.reason));
        (void)!send(fd, &reply, sizeof(reply), 0);
        _exit(1);
    }
    if (forbidden_call)
        (void)!getppid(); /* not on the allowlist: the kernel kills us here */
    reply.status = PROBER_OK;
    if (send(fd, &reply, sizeof(reply), 0) != (ssize_t)sizeof(reply))
        _exit(1);
    for (;;) {
        ssize_t n = recv(fd, &req, sizeof(req), 0);
        if (n == 0 || (n < 0 && errno != EINTR))
            break;
        if (n != (ssize_t)sizeof(req))
            continue;
        req.name[sizeof(req.name) - 1] = '\0';
        req.addr[sizeof(req.addr) - 1] = '\0';
        req.text[sizeof(req.text) - 1] = '\0';
        if (req.op == PROBE_CANCEL)
            continue; /* a wait that ended before the cancel came: nothing to answer */
        if (req.op == PROBE_WAIT_GCS) {
            /* The wait answers with its news; a request that ends it is served next. */
            struct wait_ctx ctx = {&dns, &grpc};
            struct hmac_sha256_key cluster_key; /* the token's, bound to the cluster the wait names */
            struct gcswait_io io = {&ctx, wait_resolve, wait_tcp, wait_health, fd, have_rdv_key ? &cluster_key : NULL};
            struct prober_request next;
            int rc;
            if (have_rdv_key)
                rdvauth_key_for_cluster(&cluster_key, &rdv_key, req.text);
            rc = gcswait_run(&req, &io, &next);
            explicit_bzero(&cluster_key, sizeof(cluster_key));
            if (rc < 0)
                break;
            if (rc == 0)
                continue;
            req = next;
            req.name[sizeof(req.name) - 1] = '\0';
            req.addr[sizeof(req.addr) - 1] = '\0';
            req.text[sizeof(req.text) - 1] = '\0';
            if (req.op == PROBE_WAIT_GCS || req.op == PROBE_CANCEL)
                continue; /* never sent by rayboot while a wait runs */
        }
        serve(&req, &reply, &dns, &grpc, &form);
        if (send(fd, &reply, sizeof(reply), 0) < 0)
            break;
    }
    _exit(0);
}
