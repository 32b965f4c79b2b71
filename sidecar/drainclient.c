/* The client half of the drain: with libcurl, a quick GET /hello to the sidecar's drain port on
 * 127.0.0.1 (connection refusals retried briefly: a sidecar that is restarting), then one POST
 * /drain, waited for no longer than the hello said a drain takes; the sidecar's JSON answer printed
 * as it came. Where Ray's token is set, each request carries a fresh nonce and each answer must
 * carry the sidecar's proof over it (drainproof.h): a process that took the port first cannot
 * answer "drained", nor keep the hook waiting past the hello. What a drain does is the sidecar's. */
#include "drainclient.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include <cjson/cJSON.h>

#include "drainproof.h"
#include "env.h"
#include "exitcode.h"
#include "httpc.h"
#include "json.h"
#include "log.h"
#include "monotime.h"
#include "number.h"
#include "proc.h"
#include "rayauth.h"
#include "rdvauth.h"
#include "wait.h"

/* The sidecar answers in a few hundred bytes of JSON. */
#define DRAINCLIENT_ANSWER_MAX_BYTES 4096
/* Loopback: a connection is made at once or refused. */
#define DRAINCLIENT_CONNECT_TIMEOUT_MS 1000
/* The hello is answered at once by the sidecar's loop (it waits for nothing): a listener that has
 * not answered it by then is not the sidecar, or one too stuck to drain. */
#define DRAINCLIENT_HELLO_TIMEOUT_MS 2000
/* A refused connection is tried again this often, for this long: a sidecar restarted by its
 * liveness probe listens again within a second or two. A 429 (as many callers as the sidecar lets
 * wait are waiting already, any process of the pod can be one) is tried again as often, for as
 * long as the client waits at all: the drain they wait for ends by its deadline, and this request
 * then gets its result at once. */
#define DRAINCLIENT_RETRY_MS 250
#define DRAINCLIENT_RETRY_FOR_MS 5000
/* Beyond the wait the hello names (the sidecar's drain budget and its read of the Pod). */
#define DRAINCLIENT_WAIT_SLACK_MS 2000
/* The longest the client waits in any case: the kubelet ends the hook at the grace period anyway. */
#define DRAINCLIENT_WAIT_MAX_MS 3605000L
/* --deadline=SECONDS, kept for older manifests: the range it always had. */
#define DRAINCLIENT_DEADLINE_MAX_S 3600
/* How often a `ray start` that is PID 1 is looked at while it may still be waiting for its node,
 * and for how long at most: the sidecar holds a drain 1.5 s (draining.c); a hello that says more,
 * unproven where there is no token, is not the sidecar's word. */
#define DRAINCLIENT_RAY_START_POLL_MS 50
#define DRAINCLIENT_JOIN_HOLD_MAX_MS 2000
/* What Ray 2.60's `ray start --block` opens once its node is up, and holds open while it blocks
 * (scripts.py, after Node() returned): it is past its wait for its node in the GCS. */
#define RAY_START_BLOCKING_FILE "ray_process_exit.log"

struct drainclient {
    int port;
    struct httpc http;
    bool keyed; /* Ray's token is set here: every answer must be proven */
    struct hmac_sha256_key key;
    char source[RAYAUTH_SOURCE_MAX_BYTES]; /* where the token came from, for messages */
    char nonce[DRAINPROOF_NONCE_HEX + 1];
    char proof[DRAINPROOF_TAG_HEX + 1]; /* the last answer's X-Rayboot-Proof, "" when none */
    const char *ray_start;              /* what POST /drain says of this container's `ray start`, or NULL */
};

int drainclient_deadline_check(const char *text, struct errbuf *err)
{
    long v;
    if (number_parse(text, strlen(text), 1, DRAINCLIENT_DEADLINE_MAX_S, &v) < 0)
        return errbuf_set(err, "--deadline=%.40s: expected whole seconds from 1 to %d", text,
                          DRAINCLIENT_DEADLINE_MAX_S);
    return 0;
}

/* Keeps the answer's X-Rayboot-Proof (a longer value is no proof: it is dropped). */
static void on_header(const char *line, size_t len, void *ctx)
{
    struct drainclient *c = ctx;
    size_t n = strlen(DRAINPROOF_PROOF_HEADER), end = len;
    if (len <= n || strncasecmp(line, DRAINPROOF_PROOF_HEADER, n) != 0 || line[n] != ':')
        return;
    line += n + 1;
    end -= n + 1;
    while (end > 0 && (line[0] == ' ' || line[0] == '\t')) {
        line++;
        end--;
    }
    while (end > 0 && (line[end - 1] == '\r' || line[end - 1] == '\n' || line[end - 1] == ' '))
        end--;
    if (end == DRAINPROOF_TAG_HEX) {
        memcpy(c->proof, line, end);
        c->proof[end] = '\0';
    }
}

/* One request to the drain port with a fresh nonce. As httpc_request. */
static int ask(struct drainclient *c, const char *method, const char *path, long timeout_ms, struct httpc_reply *reply,
               struct errbuf *err)
{
    char url[96], header[sizeof(DRAINPROOF_NONCE_HEADER) + DRAINPROOF_NONCE_HEX + 4];
    const char *headers[3] = {NULL, NULL, NULL}, **next = headers;
    uint8_t nonce[DRAINPROOF_NONCE_BYTES];
    struct httpc_request req = {
        .method = method,
        .url = url,
        .protocol = "http",
        .version = HTTPC_HTTP_ANY,
        .headers = headers,
        .body = strcmp(method, "POST") == 0 ? "" : NULL,
        .connect_timeout_ms = DRAINCLIENT_CONNECT_TIMEOUT_MS,
        .timeout_ms = timeout_ms,
        .max_reply_bytes = DRAINCLIENT_ANSWER_MAX_BYTES,
        .user_agent = "rayboot-sidecar drain",
        .on_header = on_header,
        .header_ctx = c,
    };
    snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", c->port, path);
    if (getrandom(nonce, sizeof(nonce), 0) != (ssize_t)sizeof(nonce)) {
        errbuf_set(err, "getrandom failed");
        return HTTPC_OTHER;
    }
    drainproof_nonce_hex(nonce, c->nonce);
    snprintf(header, sizeof(header), "%s: %s", DRAINPROOF_NONCE_HEADER, c->nonce);
    if (c->keyed)
        *next++ = header;
    if (c->ray_start && strcmp(method, "POST") == 0)
        *next++ = c->ray_start;
    c->proof[0] = '\0';
    return httpc_request(&c->http, &req, reply, err);
}

/* Whether the answer to path is the sidecar's: proven, where there is a key. */
static bool proven(const struct drainclient *c, const char *path, const struct httpc_reply *reply)
{
    const char *body = reply->body.buf ? reply->body.buf : "";
    return !c->keyed || drainproof_check(&c->key, c->nonce, path, (int)reply->status, body, reply->body.len,
                                         c->proof[0] ? c->proof : NULL);
}

static int not_proven(const struct drainclient *c, const char *what)
{
    log_error("%s on 127.0.0.1:%d (RAYBOOT_SIDECAR_DRAIN_PORT) is not proven by Ray's token (from %s): another "
              "process of this pod holds the drain port, or the sidecar has no token or another one; nothing "
              "drained by this hook",
              what, c->port, c->source);
    return DRAINCLIENT_EXIT_NOT_THE_SIDECAR;
}

/* A number of milliseconds below DRAINCLIENT_WAIT_MAX_MS from the hello's answer O, or -1. */
static long hello_ms(const cJSON *o, const char *key)
{
    const cJSON *ms = cJSON_GetObjectItemCaseSensitive(o, key);
    if (cJSON_IsNumber(ms) && ms->valuedouble >= 0 && ms->valuedouble < (double)DRAINCLIENT_WAIT_MAX_MS)
        return (long)ms->valuedouble;
    return -1;
}

/* From the hello: how long the drain may take (drain_wait_ms; DRAINCLIENT_WAIT_MAX_MS without it),
 * and how long the sidecar would hold a drain asked now, for a node that has just joined
 * (join_hold_ms; 0 without it: a sidecar from before it). */
static void read_hello(const struct httpc_reply *reply, long *wait_ms, long *join_hold_ms)
{
    cJSON *o = reply->status == 200 && reply->body.buf ? json_parse_exact(reply->body.buf, reply->body.len) : NULL;
    long wait = hello_ms(o, "drain_wait_ms"), hold = hello_ms(o, "join_hold_ms");
    *wait_ms = wait >= 0 ? wait + DRAINCLIENT_WAIT_SLACK_MS : DRAINCLIENT_WAIT_MAX_MS;
    *join_hold_ms = hold <= 0 ? 0 : hold < DRAINCLIENT_JOIN_HOLD_MAX_MS ? hold : DRAINCLIENT_JOIN_HOLD_MAX_MS;
    cJSON_Delete(o);
}

/* GET /hello: 0 with how long the drain may take in *wait_ms and the sidecar's hold of a drain
 * asked now in *join_hold_ms, or the exit code. */
static int hello(struct drainclient *c, long *wait_ms, long *join_hold_ms)
{
    long give_up_ms = monotime_ms() + DRAINCLIENT_RETRY_FOR_MS;
    struct httpc_reply reply;
    struct errbuf err;
    int rc;
    while ((rc = ask(c, "GET", "/hello", DRAINCLIENT_HELLO_TIMEOUT_MS, &reply, &err)) == HTTPC_REFUSED &&
           monotime_ms() < give_up_ms)
        wait_sleep(DRAINCLIENT_RETRY_MS, NULL);
    if (rc == HTTPC_REFUSED) {
        log_error("no answer from the sidecar on 127.0.0.1:%d (RAYBOOT_SIDECAR_DRAIN_PORT): %s", c->port, err.msg);
        return DRAINCLIENT_EXIT_NO_SIDECAR;
    }
    if (rc < 0) {
        log_error("127.0.0.1:%d (RAYBOOT_SIDECAR_DRAIN_PORT) took the connection but did not answer as the sidecar "
                  "within %d ms (%s): another process of this pod may hold the drain port; nothing drained by this "
                  "hook",
                  c->port, DRAINCLIENT_HELLO_TIMEOUT_MS, err.msg);
        return DRAINCLIENT_EXIT_NOT_THE_SIDECAR;
    }
    if (!proven(c, "/hello", &reply)) {
        httpc_reply_free(&reply);
        return not_proven(c, "the answer to GET /hello");
    }
    read_hello(&reply, wait_ms, join_hold_ms);
    if (!c->keyed)
        log_info("no Ray token here: the answer on 127.0.0.1:%d is taken on trust (nothing can prove the sidecar "
                 "without it)",
                 c->port);
    httpc_reply_free(&reply);
    return 0;
}

static int outcome(const struct drainclient *c, int rc, const struct httpc_reply *reply, const struct errbuf *err)
{
    if (rc < 0) {
        log_error("no answer from the sidecar on 127.0.0.1:%d (RAYBOOT_SIDECAR_DRAIN_PORT): %s", c->port,
                  rc == HTTPC_TOO_LARGE ? "the answer is too large" : err->msg);
        return DRAINCLIENT_EXIT_NO_SIDECAR;
    }
    if (!proven(c, "/drain", reply))
        return not_proven(c, "the answer to POST /drain");
    fputs(reply->body.buf ? reply->body.buf : "", stdout);
    if (reply->status == 200)
        return EXIT_OK;
    if (reply->status == 503) {
        log_error("the sidecar could not drain this node (its answer is on stdout)");
        return DRAINCLIENT_EXIT_NOT_DRAINED;
    }
    if (reply->status == 409) {
        log_error("the sidecar refused to drain: this pod is not being deleted (its answer is on stdout)");
        return DRAINCLIENT_EXIT_REFUSED;
    }
    log_error("the sidecar answered HTTP %ld: %.200s", reply->status, reply->body.buf ? reply->body.buf : "");
    return EXIT_SOFTWARE;
}

/* POST /drain, asked again while the sidecar says 429, until wait_ms has passed. */
static int drain(struct drainclient *c, long wait_ms)
{
    long until_ms = monotime_ms() + wait_ms;
    struct httpc_reply reply;
    struct errbuf err;
    int rc, code;
    for (bool busy_said = false;; wait_sleep(DRAINCLIENT_RETRY_MS, NULL)) {
        long left_ms = until_ms - monotime_ms();
        rc = ask(c, "POST", "/drain", left_ms > 0 ? left_ms : 1, &reply, &err);
        /* A 429 is only asked again: it carries no proof (http.c says it), and is trusted for nothing. */
        if (rc != 0 || reply.status != 429 || monotime_ms() >= until_ms)
            break;
        httpc_reply_free(&reply);
        if (!busy_said)
            log_info("the sidecar has as many callers waiting as it lets wait: asking again until it answers");
        busy_said = true;
    }
    code = outcome(c, rc, &reply, &err);
    if (rc == 0)
        httpc_reply_free(&reply);
    return code;
}

/* The key from Ray's token, where it is set here (as Ray would find it). */
static int load_key(struct drainclient *c, const char *const *envp, struct errbuf *err)
{
    struct rayauth auth;
    if (rayauth_load(envp, env_lookup_nonempty(envp, "RAYBOOT_ROOT"), &auth, err) < 0)
        return -1;
    c->keyed = auth.token_mode && rdvauth_key_from_header(&c->key, auth.header) == 0;
    snprintf(c->source, sizeof(c->source), "%s", auth.source);
    rayauth_clear(&auth);
    return 0;
}

/* What POST /drain says of this container's `ray start`, for the sidecar's hold of a drain of a
 * node that has just joined (draining.c): the hook runs in the Ray container's PID namespace, whose
 * PID 1 is what the container runs (with shareProcessNamespace, the pod's pause: nothing is said,
 * and the sidecar holds as for any pod). Where PID 1 is Ray's own `ray start` (KubeRay's pods) and
 * the sidecar would hold the drain (JOIN_HOLD_MS), it is watched for as long as the hold until it
 * is past its wait for its node, so that the drain starts then rather than at the hold's end. */
static const char *ray_start_state(long join_hold_ms)
{
    long until_ms = monotime_ms() + join_hold_ms;
    char comm[32];
    if (proc_comm("1", comm, sizeof(comm)) < 0)
        return NULL;
    if (strcmp(comm, "rayboot") == 0)
        return DRAINCLIENT_RAY_START_HEADER ": " DRAINCLIENT_RAY_START_RAYBOOT;
    if (strcmp(comm, "ray") != 0)
        return NULL;
    for (;;) {
        if (proc_has_open("1", RAY_START_BLOCKING_FILE) == 1)
            return DRAINCLIENT_RAY_START_HEADER ": " DRAINCLIENT_RAY_START_BLOCKING;
        if (monotime_ms() >= until_ms)
            return NULL;
        wait_sleep(DRAINCLIENT_RAY_START_POLL_MS, NULL);
    }
}

int drainclient_run(int port, const char *const *envp)
{
    struct drainclient c = {.port = port};
    struct errbuf err;
    long wait_ms = 0, join_hold_ms = 0;
    int code;
    if (load_key(&c, envp, &err) < 0) {
        log_error("%s", err.msg);
        return EXIT_CONFIG;
    }
    if (httpc_init(&c.http, false, &err) < 0) {
        log_error("%s", err.msg);
        return EXIT_SOFTWARE;
    }
    code = hello(&c, &wait_ms, &join_hold_ms);
    if (code == 0) {
        c.ray_start = ray_start_state(join_hold_ms);
        code = drain(&c, wait_ms);
    }
    httpc_free(&c.http);
    explicit_bzero(&c.key, sizeof(c.key));
    return code;
}
