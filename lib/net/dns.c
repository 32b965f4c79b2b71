/* Name resolution with c-ares for the prober. Asks for the absolute name (trailing dot) so the
 * pod's ndots:5 search path never turns one lookup into five (the heads rayboot finds are fully
 * qualified); only a single-label name, a Service in the pod's own namespace as a user writes it
 * in RAYBOOT_HEAD_ADDRESS, goes through the search path. Backoff between attempts is the
 * caller's. A failed query is named by what the nameserver really sent (SERVFAIL, garbage, a
 * truncated reply), not only by c-ares' "timeout" or "refused". */
#include "dns.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <ares.h>

#include "deadline.h"
#include "dnsname.h"
#include "dnsreply.h"
#include "fsroot.h"
#include "hosts.h"
#include "monotime.h"
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
    struct dnsreply_seen seen; /* the UDP datagrams that came back, peeked at before c-ares reads them */
};

static int read_nameservers(const char *root, struct resolvconf *rc, struct errbuf *err)
{
    char *text;
    memset(rc, 0, sizeof(*rc));
    if (fsroot_read(root, "/etc/resolv.conf", RESOLVCONF_FILE_MAX_BYTES, &text, NULL, err) < 0)
        return -1;
    resolvconf_parse(text, rc);
    free(text);
    if (rc->nnameservers == 0)
        return errbuf_set(err, "/etc/resolv.conf: no nameserver line");
    return 0;
}

static int set_servers(ares_channel ch, const struct resolvconf *rc, struct errbuf *err)
{
    char csv[RESOLVCONF_NAMESERVERS_MAX * (RESOLVCONF_ADDR_MAX_BYTES + 1)] = "";
    size_t used = 0;

    for (size_t i = 0; i < rc->nnameservers; i++)
        used += (size_t)snprintf(csv + used, sizeof(csv) - used, "%s%s", i ? "," : "", rc->nameservers[i]);
    if (ares_set_servers_csv(ch, csv) != ARES_SUCCESS)
        return errbuf_set(err, "/etc/resolv.conf: nameservers '%s' are not addresses", csv);
    return 0;
}

/* c-ares, in this channel and in libcurl's, fopens the real /etc/resolv.conf whatever
 * RAYBOOT_ROOT says, and that open blocks on a FIFO: the prober's start-up would hang. A
 * device (/dev/null, as some sandboxes mount) or a directory does not block and is c-ares'. */
static int check_system_resolv_conf(struct errbuf *err)
{
    struct stat st;
    if (stat("/etc/resolv.conf", &st) == 0 && S_ISFIFO(st.st_mode))
        return errbuf_set(err, "/etc/resolv.conf: not a regular file (a FIFO); the resolver would block on it");
    return 0;
}

int dns_resolver_init(struct dns_resolver *r, const char *root, struct errbuf *err)
{
    struct ares_options opts;
    struct resolvconf conf;
    struct errbuf why_no_dns, ignored;
    ares_channel ch;
    char lookups[] = "b";
    int rc, have_servers;

    memset(r, 0, sizeof(*r));
    if (check_system_resolv_conf(err) < 0)
        return -1;
    if (ares_library_init(ARES_LIB_INIT_ALL) != ARES_SUCCESS)
        return errbuf_set(err, "c-ares failed to initialise");
    have_servers = read_nameservers(root, &conf, &why_no_dns) == 0;
    memset(&opts, 0, sizeof(opts));
    opts.flags = ARES_FLAG_NOSEARCH;
    /* With one nameserver there is no other to try after a SERVFAIL or REFUSED: c-ares then
     * hands the reply over, so its code is reported as it is (and over TCP too). With several,
     * c-ares tries the next one, and a failure is named from what run_query saw. */
    if (have_servers && conf.nnameservers == 1)
        opts.flags |= ARES_FLAG_NOCHECKRESP;
    opts.timeout = DNS_QUERY_TIMEOUT_MS;
    opts.tries = DNS_QUERY_TRIES;
    opts.lookups = lookups; /* DNS only: /etc/hosts is looked up here, under RAYBOOT_ROOT */
    rc = ares_init_options(&ch, &opts, ARES_OPT_FLAGS | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES | ARES_OPT_LOOKUPS);
    if (rc != ARES_SUCCESS)
        return errbuf_set(err, "c-ares: %s", ares_strerror(rc));
    r->channel = ch;
    if (have_servers && set_servers(ch, &conf, &why_no_dns) < 0)
        have_servers = 0;
    if (have_servers && conf.nsearch > 0 && (r->search = calloc(conf.nsearch, sizeof(*r->search)))) {
        memcpy(r->search, conf.search, conf.nsearch * sizeof(*r->search));
        r->nsearch = conf.nsearch;
    }
    if (!have_servers)
        snprintf(r->no_dns, sizeof(r->no_dns), "%.200s", why_no_dns.msg);
    if (fsroot_read(root, "/etc/hosts", HOSTS_FILE_MAX_BYTES, &r->hosts_text, NULL, &ignored) < 0)
        r->hosts_text = NULL; /* no hosts file: DNS alone */
    return 0;
}

void dns_resolver_free(struct dns_resolver *r)
{
    if (r->channel)
        ares_destroy(r->channel);
    free(r->hosts_text);
    free(r->search);
    r->search = NULL;
    r->nsearch = 0;
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

/* Looks at the next datagram waiting on a c-ares socket without taking it, so that q knows what
 * came back even when c-ares drops it. UDP only (TCP is a stream); never on a socket with a
 * pending error, which reading would clear before c-ares could see it. */
static void peek_datagram(int fd, short revents, struct query_state *q)
{
    unsigned char buf[DNSREPLY_UDP_MAX_BYTES + 1];
    int type = 0;
    socklen_t tlen = sizeof(type);
    ssize_t n;

    if (!(revents & POLLIN) || (revents & POLLERR) || getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tlen) < 0 ||
        type != SOCK_DGRAM)
        return;
    n = recv(fd, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT | MSG_TRUNC); /* the whole length, however long */
    if (n >= 0)
        dnsreply_note(&q->seen, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf), (size_t)n);
}

/* Runs c-ares until the query completes or the attempt's deadline passes. */
static void run_query(ares_channel ch, struct query_state *q, long deadline)
{
    while (!q->done) {
        ares_socket_t socks[ARES_GETSOCK_MAXNUM];
        struct pollfd pfd[ARES_GETSOCK_MAXNUM];
        struct timeval tv, *tvp;
        int bits = ares_getsock(ch, socks, ARES_GETSOCK_MAXNUM), n = 0;
        long left = deadline - monotime_ms(), wait_ms;
        if (left <= 0) {
            ares_cancel(ch); /* calls on_addrinfo with ARES_ECANCELLED */
            q->status = ARES_ETIMEOUT;
            return;
        }
        for (int i = 0; i < ARES_GETSOCK_MAXNUM; i++) {
            if (!ARES_GETSOCK_READABLE(bits, i) && !ARES_GETSOCK_WRITABLE(bits, i))
                continue;
            pfd[n].fd = socks[i];
            pfd[n].events =
                (short)((ARES_GETSOCK_READABLE(bits, i) ? POLLIN : 0) | (ARES_GETSOCK_WRITABLE(bits, i) ? POLLOUT : 0));
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
        for (int i = 0; i < n; i++)
            peek_datagram(pfd[i].fd, pfd[i].revents, q);
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

static const char *status_reason(const struct query_state *q)
{
    /* "Timeout" and "refused" are all c-ares says when every reply was dropped or skipped. */
    const char *seen = dnsreply_reason(&q->seen);
    switch (q->status) {
    case ARES_ENOTFOUND:
        return "NXDOMAIN (no such name yet)";
    case ARES_ENODATA:
        return "no address record yet";
    case ARES_EFORMERR:
        return dnsreply_rcode_reason(DNSREPLY_RCODE_FORMERR);
    case ARES_ESERVFAIL:
        return dnsreply_rcode_reason(DNSREPLY_RCODE_SERVFAIL);
    case ARES_ENOTIMP:
        return dnsreply_rcode_reason(DNSREPLY_RCODE_NOTIMP);
    case ARES_EREFUSED:
        return dnsreply_rcode_reason(DNSREPLY_RCODE_REFUSED);
    case ARES_ETIMEOUT:
        return seen ? seen : "DNS timeout (no answer: nameserver slow, down or unreachable)";
    case ARES_ECONNREFUSED:
        return seen ? seen : "nameserver unreachable (connection refused)";
    case ARES_EBADRESP:
        return "malformed DNS reply (c-ares could not parse it)";
    default:
        return ares_strerror(q->status);
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

/* An A record, else an AAAA record, for one absolute name. */
static int lookup(struct dns_resolver *r, const char *absolute, struct query_state *q, long deadline)
{
    if (query(r, absolute, AF_INET, q, deadline) == ARES_ENODATA)
        query(r, absolute, AF_INET6, q, deadline);
    return q->status;
}

/* A single-label name ("ray-head") under each search domain in order, as the C library tries it
 * (the kubelet's path starts with NS.svc.<domain>), then as it is: 0 with the address at the
 * first that answers; -1 with the failure under the first domain, the name's likeliest home. */
static int lookup_in_search_path(struct dns_resolver *r, const char *name, struct query_state *q, long deadline,
                                 struct errbuf *err)
{
    char candidate[DNS_NAME_MAX_BYTES + 2];
    err->msg[0] = '\0';
    for (size_t i = 0; i < r->nsearch && monotime_ms() < deadline; i++) {
        int n = snprintf(candidate, sizeof(candidate), "%s.%s.", name, r->search[i]);
        if (n < 0 || (size_t)n > DNS_NAME_MAX_BYTES + 1)
            continue;
        if (lookup(r, candidate, q, deadline) == ARES_SUCCESS)
            return 0;
        if (!err->msg[0])
            errbuf_set(err, "%s for %.*s", status_reason(q), n - 1, candidate);
    }
    snprintf(candidate, sizeof(candidate), "%s.", name);
    if (lookup(r, candidate, q, deadline) == ARES_SUCCESS)
        return 0;
    if (!err->msg[0])
        errbuf_set(err, "%s", status_reason(q));
    return -1;
}

int dns_resolve(struct dns_resolver *r, const char *name, long budget_ms, char addr[DNS_ADDR_MAX_BYTES],
                struct errbuf *err)
{
    unsigned char buf[16];
    char absolute[DNS_NAME_MAX_BYTES + 2];
    struct query_state q;
    long deadline = monotime_ms() + deadline_cap_ms(DNS_ATTEMPT_MAX_MS, budget_ms);
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
    if (!strchr(name, '.')) {
        if (lookup_in_search_path(r, name, &q, deadline, err) < 0)
            return -1;
    } else {
        snprintf(absolute, sizeof(absolute), "%s%s", name, name[len - 1] == '.' ? "" : ".");
        if (lookup(r, absolute, &q, deadline) != ARES_SUCCESS)
            return errbuf_set(err, "%s", status_reason(&q));
    }
    memcpy(addr, q.addr, DNS_ADDR_MAX_BYTES);
    return 0;
}
