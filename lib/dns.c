/* Name resolution with c-ares for the prober. Asks for the absolute name (trailing dot) so the
 * pod's ndots:5 search path never turns one lookup into five; backoff between attempts is
 * the caller's. */
#include "dns.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ares.h>

#include "dnsname.h"
#include "fsroot.h"
#include "hosts.h"
#include "resolvconf.h"

/* Per query and server: in-cluster DNS answers in a millisecond or two; 400 ms means a lost
 * packet or a dead server, and the second try (or the next server) goes out then. */
#define DNS_QUERY_TIMEOUT_MS 400
#define DNS_QUERY_TRIES 2
/* One dns_resolve never takes longer than this, whatever c-ares does. */
#define DNS_ATTEMPT_MAX_MS 3000

struct query_state {
    bool done;
    int status;
    char addr[DNS_ADDR_MAX_BYTES];
};

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static int set_servers(ares_channel ch, const char *root, struct errbuf *err)
{
    struct resolvconf rc;
    char csv[RESOLVCONF_NAMESERVERS_MAX * (RESOLVCONF_ADDR_MAX_BYTES + 1)] = "";
    char *text;
    size_t used = 0;

    if (fsroot_read(root, "/etc/resolv.conf", RESOLVCONF_FILE_MAX_BYTES, &text, NULL, err) < 0)
        return -1;
    resolvconf_parse(text, &rc);
    free(text);
    if (rc.nnameservers == 0)
        return errbuf_set(err, "/etc/resolv.conf: no nameserver line");
    for (size_t i = 0; i < rc.nnameservers; i++)
        used += (size_t)snprintf(csv + used, sizeof(csv) - used, "%s%s", i ? "," : "", rc.nameservers[i]);
    if (ares_set_servers_csv(ch, csv) != ARES_SUCCESS)
        return errbuf_set(err, "/etc/resolv.conf: nameservers '%s' are not addresses", csv);
    return 0;
}

int dns_resolver_init(struct dns_resolver *r, const char *root, struct errbuf *err)
{
    struct ares_options opts;
    ares_channel ch;
    char lookups[] = "b";
    struct errbuf ignored;
    int rc;

    memset(r, 0, sizeof(*r));
    if (ares_library_init(ARES_LIB_INIT_ALL) != ARES_SUCCESS)
        return errbuf_set(err, "c-ares failed to initialise");
    memset(&opts, 0, sizeof(opts));
    opts.flags = ARES_FLAG_NOSEARCH;
    opts.timeout = DNS_QUERY_TIMEOUT_MS;
    opts.tries = DNS_QUERY_TRIES;
    opts.lookups = lookups; /* DNS only: /etc/hosts is looked up here, under RAYBOOT_ROOT */
    rc = ares_init_options(&ch, &opts, ARES_OPT_FLAGS | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES | ARES_OPT_LOOKUPS);
    if (rc != ARES_SUCCESS)
        return errbuf_set(err, "c-ares: %s", ares_strerror(rc));
    r->channel = ch;
    if (set_servers(ch, root, err) < 0)
        snprintf(r->no_dns, sizeof(r->no_dns), "%.200s", err->msg);
    if (fsroot_read(root, "/etc/hosts", HOSTS_FILE_MAX_BYTES, &r->hosts_text, NULL, &ignored) < 0)
        r->hosts_text = NULL; /* no hosts file: DNS alone */
    return 0;
}

void dns_resolver_free(struct dns_resolver *r)
{
    if (r->channel)
        ares_destroy(r->channel);
    free(r->hosts_text);
    r->channel = NULL;
    r->hosts_text = NULL;
}

static void on_addrinfo(void *arg, int status, int timeouts, struct ares_addrinfo *res)
{
    struct query_state *q = arg;
    (void)timeouts;
    q->done = true;
    q->status = status;
    if (status == ARES_SUCCESS && res && res->nodes) {
        const struct ares_addrinfo_node *n = res->nodes;
        const void *a = n->ai_family == AF_INET ? (const void *)&((struct sockaddr_in *)n->ai_addr)->sin_addr
                                                : (const void *)&((struct sockaddr_in6 *)n->ai_addr)->sin6_addr;
        if (!inet_ntop(n->ai_family, a, q->addr, sizeof(q->addr)))
            q->status = ARES_EBADRESP;
    } else if (status == ARES_SUCCESS) {
        q->status = ARES_ENODATA;
    }
    if (res)
        ares_freeaddrinfo(res);
}

/* Runs c-ares until the query completes or the attempt's deadline passes. */
static void run_query(ares_channel ch, struct query_state *q, long deadline)
{
    while (!q->done) {
        ares_socket_t socks[ARES_GETSOCK_MAXNUM];
        struct pollfd pfd[ARES_GETSOCK_MAXNUM];
        struct timeval tv, *tvp;
        int bits = ares_getsock(ch, socks, ARES_GETSOCK_MAXNUM), n = 0;
        long left = deadline - now_ms(), wait_ms;
        if (left <= 0) {
            ares_cancel(ch); /* calls on_addrinfo with ARES_ECANCELLED */
            q->status = ARES_ETIMEOUT;
            return;
        }
        for (int i = 0; i < ARES_GETSOCK_MAXNUM; i++) {
            if (!ARES_GETSOCK_READABLE(bits, i) && !ARES_GETSOCK_WRITABLE(bits, i))
                continue;
            pfd[n].fd = socks[i];
            pfd[n].events = (short)((ARES_GETSOCK_READABLE(bits, i) ? POLLIN : 0) |
                                    (ARES_GETSOCK_WRITABLE(bits, i) ? POLLOUT : 0));
            pfd[n].revents = 0;
            n++;
        }
        tvp = ares_timeout(ch, NULL, &tv);
        wait_ms = tvp ? tvp->tv_sec * 1000L + tvp->tv_usec / 1000L + 1 : left;
        if (wait_ms > left)
            wait_ms = left;
        if (poll(pfd, (nfds_t)n, (int)wait_ms) < 0 && errno != EINTR) {
            ares_cancel(ch);
            q->status = ARES_ECONNREFUSED;
            return;
        }
        for (int i = 0; i < n; i++) {
            ares_socket_t rd = (pfd[i].revents & (POLLIN | POLLERR | POLLHUP)) ? pfd[i].fd : ARES_SOCKET_BAD;
            ares_socket_t wr = (pfd[i].revents & POLLOUT) ? pfd[i].fd : ARES_SOCKET_BAD;
            if (rd != ARES_SOCKET_BAD || wr != ARES_SOCKET_BAD)
                ares_process_fd(ch, rd, wr);
        }
        /* With no socket ready this only expires timed-out queries (and retries them). */
        ares_process_fd(ch, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
    }
}

static const char *status_reason(int status)
{
    switch (status) {
    case ARES_ENOTFOUND:
        return "NXDOMAIN (no such name yet)";
    case ARES_ENODATA:
        return "no address record yet";
    case ARES_ESERVFAIL:
        return "SERVFAIL";
    case ARES_EREFUSED:
        return "DNS query refused";
    case ARES_ETIMEOUT:
        return "DNS timeout (nameserver down or unreachable)";
    case ARES_ECONNREFUSED:
        return "nameserver refused the query or is unreachable";
    case ARES_EBADRESP:
    case ARES_EFORMERR:
        return "malformed DNS reply";
    default:
        return ares_strerror(status);
    }
}

static int query(struct dns_resolver *r, const char *absolute, int family, struct query_state *q, long deadline)
{
    struct ares_addrinfo_hints hints;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = family;
    hints.ai_flags = ARES_AI_NOSORT; /* sorting would connect(2) to every answer */
    memset(q, 0, sizeof(*q));
    ares_getaddrinfo(r->channel, absolute, NULL, &hints, on_addrinfo, q);
    run_query(r->channel, q, deadline);
    return q->status;
}

int dns_resolve(struct dns_resolver *r, const char *name, char addr[DNS_ADDR_MAX_BYTES],
                struct errbuf *err)
{
    unsigned char buf[16];
    char absolute[DNS_NAME_MAX_BYTES + 2];
    struct query_state q;
    long deadline = now_ms() + DNS_ATTEMPT_MAX_MS;
    size_t len = strlen(name);

    if (inet_pton(AF_INET, name, buf) == 1 || inet_pton(AF_INET6, name, buf) == 1) {
        snprintf(addr, DNS_ADDR_MAX_BYTES, "%s", name);
        return 0;
    }
    if (r->hosts_text && hosts_lookup_addr(r->hosts_text, name, addr, DNS_ADDR_MAX_BYTES) == 0)
        return 0;
    if (len == 0 || len > DNS_NAME_MAX_BYTES + 1)
        return errbuf_set(err, "not a host name");
    if (r->no_dns[0])
        return errbuf_set(err, "%s", r->no_dns);
    snprintf(absolute, sizeof(absolute), "%s%s", name, name[len - 1] == '.' ? "" : ".");
    if (query(r, absolute, AF_INET, &q, deadline) == ARES_ENODATA)
        query(r, absolute, AF_INET6, &q, deadline);
    if (q.status != ARES_SUCCESS)
        return errbuf_set(err, "%s", status_reason(q.status));
    memcpy(addr, q.addr, DNS_ADDR_MAX_BYTES);
    return 0;
}
