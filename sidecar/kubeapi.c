/* GET /api/v1/namespaces/NS/pods/NAME with the mounted token, in a forked child that prints one
 * line to a pipe: a verdict letter (going, staying, unread), a space, the reason. The child parses TLS from the network
 * with mbedTLS, so it confines itself with the prober's seccomp filter (and what TLS adds) once it holds the CA and the
 * token and before it connects; TLS 1.2 at least, 1.3 when the API server offers it. The token is zeroed wherever this
 * program held it. The parsing of the Pod is podreason.c's; deciding what to do with the reason is
 * the drain's. */
#include "kubeapi.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "address.h"
#include "apitls.h"
#include "dnsname.h"
#include "fsroot.h"
#include "helper.h"
#include "httpc.h"
#include "podreason.h"
#include "sandbox.h"
#include "scrub.h"
#include "secrets.h"

#define SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
/* A bound service-account token is about 1 KB; legacy ones are similar. */
#define TOKEN_MAX_BYTES (16 * 1024)
/* A cluster's CA bundle is a certificate or a few. */
#define CA_MAX_BYTES (256 * 1024)
#define KUBEAPI_CONNECT_TIMEOUT_MS 1000
/* A reader whose pipe reached EOF is exiting: this is ample, and the loop is not held longer. */
#define KUBEAPI_STOP_GRACE_MS 100
/* The name in every API server certificate's subjectAltName (kubeadm, k3s, EKS, GKE, AKS). */
#define KUBEAPI_NAME "kubernetes.default.svc"

static bool is_ip_literal(const char *host)
{
    unsigned char buf[sizeof(struct in6_addr)];
    return inet_pton(AF_INET, host, buf) == 1 || inet_pton(AF_INET6, host, buf) == 1;
}

static void trim(char *s, size_t *len)
{
    while (*len > 0 && (s[*len - 1] == '\n' || s[*len - 1] == '\r' || s[*len - 1] == ' '))
        s[--*len] = '\0';
}

/* What the API reader may do beyond the prober's allowlist (lib/confine/sandbox.c), from an strace of a
 * read: mbedTLS's entropy (getrandom, deps/mbedtls_entropy.c), getpid (mbedTLS 3.6's PSA random
 * generator compares it with the seeding process's on every draw, to reseed after a fork), and the
 * one write of its answer to the parent. c-ares looks a host name up in /etc/hosts first: any open
 * is answered "no such file", so it goes on to DNS and nothing is read. */
static int confine(int out_fd, struct errbuf *err)
{
    const struct sandbox_rule more[] = {
        SANDBOX_ALLOW(getrandom),
        SANDBOX_ALLOW(getpid),
        SANDBOX_ALLOW_IF("write-answer", write, SANDBOX_ARG_EQ(0, (scmp_datum_t)out_fd)),
        SANDBOX_ANSWER(open, ENOENT),
        SANDBOX_ANSWER(openat, ENOENT),
    };
    return sandbox_confine_prober_and(more, sizeof(more) / sizeof(more[0]), err);
}

static void forget(char *secret, size_t len)
{
    if (secret)
        explicit_bzero(secret, len);
}

static int confine_hook(void *out_fd, struct errbuf *err)
{
    return confine(*(int *)out_fd, err);
}

/* The CA, read now into memory for req (after confinement nothing is opened): 0, or -1 with the
 * line written. */
static int read_ca(const struct kubeapi_target *t, struct httpc_request *req, char **ca, char *line, size_t cap)
{
    size_t ca_len = 0;
    struct errbuf err;
    if (fsroot_read(t->root, SA_DIR "/ca.crt", CA_MAX_BYTES, ca, &ca_len, &err) < 0) {
        snprintf(line, cap, "reason unknown (%.400s)", err.msg);
        return -1;
    }
    req->ca_blob = *ca;
    req->ca_blob_len = ca_len;
    return 0;
}

/* The child's line starts with one of these, then a space. */
#define VERDICT_GOING 'G'
#define VERDICT_STAYING 'S'
#define VERDICT_UNREAD 'U'
#define VERDICT_DENIED 'D'

/* The child's whole job: one GET, one line out (to out_fd), its verdict in *verdict. */
static void fetch_and_describe(const struct kubeapi_target *t, const char *token, int out_fd, char *line, size_t cap,
                               char *verdict)
{
    char url[512], auth[TOKEN_MAX_BYTES + 32];
    const char *headers[] = {auth, "Accept: application/json", NULL};
    const char *port = t->port ? t->port : "443";
    char pin[300], host[256], *ca = NULL;
    bool literal = is_ip_literal(t->host);
    struct apitls tls = {false};
    struct httpc_request req = {
        .method = "GET",
        .url = url,
        .protocol = "https",
        .version = HTTPC_HTTP_ANY,
        .headers = headers,
        .connect_timeout_ms = KUBEAPI_CONNECT_TIMEOUT_MS,
        .timeout_ms = KUBEAPI_TIMEOUT_MS - 300L,
        .max_reply_bytes = PODREASON_POD_MAX_BYTES,
        .resolve = literal ? pin : NULL,
        .user_agent = "rayboot-sidecar",
        .before_transfer = confine_hook,
        .before_ctx = &out_fd,
        .tls_setup = apitls_setup,
        .tls_ctx = &tls,
    };
    struct httpc_reply reply;
    struct httpc http;
    struct pod_reason pr;
    struct errbuf err;
    int rc;

    *verdict = VERDICT_UNREAD;
    /* t->host is in the environment, which is wiped before the request (secrets_shed). */
    snprintf(host, sizeof(host), "%s", t->host);
    /* An API server is reached at an IP, but mbedTLS 2.x verified DNS names only (3.6 verifies IP
     * addresses too); every API server's certificate names kubernetes.default.svc, so that name is
     * verified and pinned to the IP. */
    snprintf(url, sizeof(url), "https://%s:%s/api/v1/namespaces/%s/pods/%s", literal ? KUBEAPI_NAME : t->host, port,
             t->namespace_, t->pod_name);
    snprintf(pin, sizeof(pin), "%s:%s:%s%s%s", KUBEAPI_NAME, port, strchr(t->host, ':') ? "[" : "", t->host,
             strchr(t->host, ':') ? "]" : "");
    if (read_ca(t, &req, &ca, line, cap) < 0)
        return;
    if (httpc_init(&http, true, &err) < 0) {
        snprintf(line, cap, "reason unknown (could not set up the API request)");
        free(ca);
        return;
    }
    /* c-ares has read what it wanted of the environment (httpc_init). */
    if (secrets_shed(&err) < 0) {
        snprintf(line, cap, "reason unknown (%.400s)", err.msg);
        free(ca);
        httpc_free(&http);
        return;
    }
    snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
    rc = httpc_request(&http, &req, &reply, &err);
    forget(auth, sizeof(auth));
    if (rc < 0 && tls.no_san) {
        snprintf(line, cap,
                 "reason unknown (API server %.100s: its certificate names " KUBEAPI_NAME " in its CN only, with "
                 "no subjectAltName: refused, as Go's client and kubectl refuse it; the token was not sent)",
                 host);
    } else if (rc < 0) {
        snprintf(line, cap, "reason unknown (API server %.100s: %.300s)", host,
                 rc == HTTPC_TOO_LARGE ? "the Pod object is too large" : err.msg);
    } else if (reply.status != 200) {
        if (reply.status == 401 || reply.status == 403)
            *verdict = VERDICT_DENIED;
        snprintf(line, cap,
                 "reason unknown (API server answered HTTP %ld for pods/%.100s; the sidecar needs RBAC "
                 "get on pods)",
                 reply.status, t->pod_name);
    } else if (podreason_parse(reply.body.buf, reply.body.len, &pr, &err) < 0) {
        snprintf(line, cap, "reason unknown (%.400s)", err.msg);
    } else {
        podreason_describe(&pr, line, cap);
        *verdict = podreason_going(&pr) ? VERDICT_GOING : VERDICT_STAYING;
    }
    if (rc == 0)
        httpc_reply_free(&reply);
    httpc_free(&http);
    free(ca);
}

static long now_plus(long now_ms, long ms)
{
    return now_ms + ms;
}

/* The request's URL and header are built from these: only a host, a port and a token may be in
 * them, never URL or header syntax (a '/' or '@' in the host, a line break in the token). */
static int check_target(const struct kubeapi_target *t, const char *token, size_t token_len, struct errbuf *err)
{
    int port;
    if (!is_ip_literal(t->host) && !dnsname_valid(t->host, strlen(t->host)))
        return errbuf_set(err, "KUBERNETES_SERVICE_HOST=%.80s: not an IP address or a host name", t->host);
    if (t->port && port_parse(t->port, &port, err) < 0)
        return errbuf_prefix(err, "KUBERNETES_SERVICE_PORT=%.20s", t->port);
    for (size_t i = 0; i < token_len; i++) {
        if ((unsigned char)token[i] < 0x21 || (unsigned char)token[i] == 0x7f)
            return errbuf_set(err, SA_DIR "/token: a space or control character at byte %zu (not a bearer token)", i);
    }
    return 0;
}

/* What the API reader is given: the target, the token (wiped once used) and a line to write. */
struct reader_args {
    const struct kubeapi_target *t;
    char *token;
    size_t token_len;
    char *line;
    size_t cap;
    char *verdict; /* its letter and a space, written before the line */
};

static int reader(int fd, void *arg)
{
    const struct reader_args *a = arg;
    /* Like the prober, it keeps none of the sidecar's descriptors (listening and client
     * sockets, the prober's socket): only its pipe to the parent. */
    int out = scrub_fds(fd);
    if (out < 0)
        return 0; /* the parent reads EOF: "the API reader failed" */
    fetch_and_describe(a->t, a->token, out, a->line, a->cap, &a->verdict[0]);
    forget(a->token, a->token_len);
    (void)!write(out, a->verdict, 2);
    (void)!write(out, a->line, strlen(a->line));
    return 0;
}

/* The token, read and checked with the target: what a read needs before it can be made. */
static int load_token(const struct kubeapi_target *t, char **token, size_t *token_len, struct errbuf *err)
{
    *token = NULL;
    *token_len = 0;
    if (!t->host || !t->host[0])
        return errbuf_set(err, "KUBERNETES_SERVICE_HOST is not set (not running in Kubernetes?)");
    if (!t->namespace_[0] || !t->pod_name[0])
        return errbuf_set(err, "this pod's namespace or name is unknown (set RAYBOOT_POD_NAMESPACE, RAYBOOT_POD_NAME)");
    if (fsroot_read(t->root, SA_DIR "/token", TOKEN_MAX_BYTES, token, token_len, err) < 0)
        return -1;
    trim(*token, token_len);
    if (check_target(t, *token, *token_len, err) < 0) {
        forget(*token, *token_len);
        free(*token);
        *token = NULL;
        return -1;
    }
    return 0;
}

int kubeapi_access(const struct kubeapi_target *t, struct errbuf *err)
{
    char *token;
    size_t token_len;
    if (load_token(t, &token, &token_len, err) < 0)
        return -1;
    forget(token, token_len);
    free(token);
    return 0;
}

int kubeapi_reason_start(struct kubeapi_fetch *f, const struct kubeapi_target *t, long now_ms, struct errbuf *err)
{
    char *token = NULL, line[sizeof(f->line)], verdict[2] = {VERDICT_UNREAD, ' '};
    size_t token_len = 0;
    int fds[2], rc;

    memset(f, 0, sizeof(*f));
    f->fd = -1;
    f->pid = -1;
    if (load_token(t, &token, &token_len, err) < 0)
        return -1;
    if (pipe2(fds, O_CLOEXEC) < 0) {
        forget(token, token_len);
        free(token);
        return errbuf_set(err, "pipe: %s", strerror(errno));
    }
    {
        struct reader_args a = {t, token, token_len, line, sizeof(line) - sizeof(verdict), verdict};
        rc = helper_start(&f->pid, &f->fd, fds[0], fds[1], reader, &a, err);
    }
    forget(token, token_len);
    free(token);
    if (rc < 0)
        return -1;
    f->deadline_ms = now_plus(now_ms, KUBEAPI_TIMEOUT_MS);
    return 0;
}

/* The reader is done (its pipe at EOF): it is exiting, and is not waited for longer. */
static void finish(struct kubeapi_fetch *f)
{
    helper_stop(&f->pid, &f->fd, KUBEAPI_STOP_GRACE_MS, NULL);
}

/* The child's letter and space off the front of its line; anything else (nothing at all: the child
 * died) is an unread Pod. */
static void take_verdict(struct kubeapi_fetch *f)
{
    char letter = '\0';
    if (f->len >= 2 && f->line[1] == ' ')
        letter = f->line[0];
    switch (letter) {
    case VERDICT_GOING:
        f->verdict = KUBEAPI_GOING;
        break;
    case VERDICT_STAYING:
        f->verdict = KUBEAPI_STAYING;
        break;
    case VERDICT_DENIED:
        f->verdict = KUBEAPI_DENIED;
        break;
    default:
        f->verdict = KUBEAPI_UNREAD;
    }
    if (letter != VERDICT_GOING && letter != VERDICT_STAYING && letter != VERDICT_UNREAD && letter != VERDICT_DENIED) {
        snprintf(f->line, sizeof(f->line), "reason unknown (the API reader failed)");
        return;
    }
    memmove(f->line, f->line + 2, f->len - 1); /* the text and its NUL */
    f->len -= 2;
}

bool kubeapi_reason_read(struct kubeapi_fetch *f, long now_ms)
{
    ssize_t n;
    if (f->fd < 0)
        return true;
    if (now_ms >= f->deadline_ms) {
        kubeapi_reason_cancel(f);
        f->verdict = KUBEAPI_UNREAD;
        snprintf(f->line, sizeof(f->line), "reason unknown (the API server did not answer within %d ms)",
                 KUBEAPI_TIMEOUT_MS);
        return true;
    }
    n = read(f->fd, f->line + f->len, sizeof(f->line) - 1 - f->len);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return false;
    if (n > 0) {
        f->len += (size_t)n;
        f->line[f->len] = '\0';
        if (f->len + 1 < sizeof(f->line))
            return false;
    }
    /* EOF (or the line is full): the child is done. */
    f->line[f->len] = '\0';
    take_verdict(f);
    finish(f);
    return true;
}

void kubeapi_reason_cancel(struct kubeapi_fetch *f)
{
    helper_stop(&f->pid, &f->fd, 0, NULL);
}
