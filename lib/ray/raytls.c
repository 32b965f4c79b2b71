/* Ray's TLS settings read as Ray 2.60 reads them (python/ray/_common/tls_utils.py, the C++
 * RayConfig's USE_TLS and TLS_* paths), and this pod's client identity: the files given, or a
 * certificate made in memory from the CA's key. What the GCS's certificate must name is
 * lib/net/grpc.c's; the files for Ray itself are init/tlsfiles.c's. */
#include "raytls.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "env.h"
#include "fsroot.h"
#include "log.h"
#include "number.h"
#include "rayauth.h"

bool raytls_wanted(const char *const *envp)
{
    return rayauth_true(env_lookup(envp, "RAY_USE_TLS"));
}

int raytls_cert_hours(const char *const *envp, long *hours, struct errbuf *err)
{
    const char *v = env_lookup_nonempty(envp, "RAYBOOT_TLS_CERT_HOURS");
    *hours = RAYTLS_CERT_HOURS_DEFAULT;
    if (v && number_parse_trimmed(v, 1, RAYTLS_CERT_HOURS_MAX, hours) < 0)
        return errbuf_set(err, "RAYBOOT_TLS_CERT_HOURS=%.40s: not a number of hours from 1 to %ld", v,
                          RAYTLS_CERT_HOURS_MAX);
    return 0;
}

int raytls_read_pem(const char *var, const char *path, char **out, size_t *len, struct errbuf *err)
{
    if (fsroot_read(NULL, path, TLSCERT_PEM_MAX_BYTES, out, len, err) < 0)
        return errbuf_prefix(err, "%s", var);
    if (!strstr(*out, "-----BEGIN ")) {
        explicit_bzero(*out, *len);
        free(*out);
        *out = NULL;
        return errbuf_set(err, "%s=%.400s: not a PEM file", var, path);
    }
    return 0;
}

/* A variable that must name a file: its value, or -1 saying what RAY_USE_TLS needs. */
static int required(const char *const *envp, const char *var, const char **value, struct errbuf *err)
{
    *value = env_lookup_nonempty(envp, var);
    if (!*value)
        return errbuf_set(
            err,
            "RAY_USE_TLS is on but %s is not set: Ray's TLS needs RAY_TLS_CA_CERT, and "
            "RAY_TLS_SERVER_CERT with RAY_TLS_SERVER_KEY or RAYBOOT_TLS_CA_KEY to make them (docs/tls.md)",
            var);
    return 0;
}

/* A client certificate for host, made from the CA key, never written anywhere. */
static int make_identity(const char *const *envp, const char *host, time_t now, struct raytls *t, struct errbuf *err)
{
    const char *key_path = env_lookup_nonempty(envp, "RAYBOOT_TLS_CA_KEY");
    const char *const names[] = {host, NULL}, *const none[] = {NULL};
    struct tlscert_request req = {t->ca, t->ca_len, NULL, 0, host, names, none, now, 0};
    struct tlscert made;
    char *ca_key = NULL;
    size_t ca_key_len = 0;
    long hours;
    int rc;
    if (raytls_cert_hours(envp, &hours, err) < 0 ||
        raytls_read_pem("RAYBOOT_TLS_CA_KEY", key_path, &ca_key, &ca_key_len, err) < 0)
        return -1;
    req.ca_key_pem = ca_key;
    req.ca_key_len = ca_key_len;
    req.valid_s = hours * 3600L;
    rc = tlscert_make(&req, &made, err);
    explicit_bzero(ca_key, ca_key_len);
    free(ca_key);
    if (rc < 0)
        return errbuf_prefix(err, "RAY_TLS_CA_CERT and RAYBOOT_TLS_CA_KEY=%.300s", key_path);
    t->cert = made.cert_pem; /* raytls_free zeroes and frees them */
    t->cert_len = made.cert_len;
    t->key = made.key_pem;
    t->key_len = made.key_len;
    snprintf(t->source, sizeof(t->source), "a certificate for %.200s made from RAYBOOT_TLS_CA_KEY=%.300s", host,
             key_path);
    return 0;
}

static int load(const char *const *envp, const char *host, time_t now, struct raytls *t, struct errbuf *err)
{
    const char *ca_path, *cert_path = env_lookup_nonempty(envp, "RAY_TLS_SERVER_CERT"),
                         *key_path = env_lookup_nonempty(envp, "RAY_TLS_SERVER_KEY");
    if (required(envp, "RAY_TLS_CA_CERT", &ca_path, err) < 0 ||
        raytls_read_pem("RAY_TLS_CA_CERT", ca_path, &t->ca, &t->ca_len, err) < 0)
        return -1;
    if (!cert_path || !key_path) {
        if (!env_lookup_nonempty(envp, "RAYBOOT_TLS_CA_KEY"))
            return required(envp, cert_path ? "RAY_TLS_SERVER_KEY" : "RAY_TLS_SERVER_CERT", &cert_path, err);
        return make_identity(envp, host, now, t, err);
    }
    if (raytls_read_pem("RAY_TLS_SERVER_CERT", cert_path, &t->cert, &t->cert_len, err) < 0 ||
        raytls_read_pem("RAY_TLS_SERVER_KEY", key_path, &t->key, &t->key_len, err) < 0)
        return -1;
    snprintf(t->source, sizeof(t->source), "RAY_TLS_SERVER_CERT=%.250s and RAY_TLS_SERVER_KEY=%.250s", cert_path,
             key_path);
    return 0;
}

int raytls_load(const char *const *envp, const char *host, time_t now, struct raytls *t, struct errbuf *err)
{
    memset(t, 0, sizeof(*t));
    if (!raytls_wanted(envp))
        return 0;
    if (load(envp, host, now, t, err) < 0) {
        raytls_free(t);
        return -1;
    }
    t->on = true;
    t->tls = (struct grpc_tls){t->ca, t->ca_len, t->cert, t->cert_len, t->key, t->key_len};
    return 0;
}

int raytls_load_here(const char *const *envp, struct raytls *t, struct errbuf *err)
{
    char host[256] = "";
    if (gethostname(host, sizeof(host) - 1) < 0 || !host[0])
        snprintf(host, sizeof(host), "rayboot");
    return raytls_load(envp, host, time(NULL), t, err);
}

int raytls_check(const char *const *envp, struct errbuf *err)
{
    struct raytls t;
    if (raytls_load_here(envp, &t, err) < 0)
        return -1;
    if (t.on)
        log_info("Ray TLS: every GCS call over mutual TLS, the GCS's certificate checked against RAY_TLS_CA_CERT=%s; "
                 "this pod shows %s",
                 env_lookup(envp, "RAY_TLS_CA_CERT"), t.source);
    raytls_free(&t);
    return 0;
}

void raytls_free(struct raytls *t)
{
    if (t->key)
        explicit_bzero(t->key, t->key_len);
    free(t->ca);
    free(t->cert);
    free(t->key);
    memset(t, 0, sizeof(*t));
}
