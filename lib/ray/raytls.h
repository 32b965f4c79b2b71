/* Ray's TLS (`RAY_USE_TLS`, Ray 2.60) as rayboot's own GCS client needs it: whether it is on, the
 * CA that must have signed the GCS's certificate, and the certificate and key this pod shows in
 * turn (Ray's gRPC servers require one). Making the files Ray itself reads is init/tlsfiles.c's;
 * speaking TLS is lib/net/grpc.c's. docs/tls.md says who verifies what. */
#ifndef RAYBOOT_RAYTLS_H
#define RAYBOOT_RAYTLS_H

#include <stdbool.h>
#include <time.h>

#include "errbuf.h"
#include "grpc.h"
#include "tlscert.h"

/* Where the identity came from, for the log (paths, never a key). */
#define RAYTLS_SOURCE_MAX_BYTES 600
/* A made certificate's life when RAYBOOT_TLS_CERT_HOURS is unset: a week. Ray reads its
 * certificate once, when it starts, and never again, so it must outlast the pod. */
#define RAYTLS_CERT_HOURS_DEFAULT 168L
#define RAYTLS_CERT_HOURS_MAX 8760L

struct raytls {
    bool on;             /* RAY_USE_TLS is "1" or "true" (any case), as Ray reads it */
    struct grpc_tls tls; /* points into the buffers below */
    char *ca, *cert, *key;
    size_t ca_len, cert_len, key_len;
    char source[RAYTLS_SOURCE_MAX_BYTES];
};

/* Ray's boolean RAY_USE_TLS. */
bool raytls_wanted(const char *const *envp);

/* RAYBOOT_TLS_CERT_HOURS (1..8760), else the default; -1 naming the variable. */
int raytls_cert_hours(const char *const *envp, long *hours, struct errbuf *err);

/* Reads the CA (RAY_TLS_CA_CERT) and this pod's certificate and key: RAY_TLS_SERVER_CERT and
 * RAY_TLS_SERVER_KEY when both are set (the files Ray reads too), else one made in memory for
 * host (its name is the certificate's only one: a client's names are not checked) from the CA key
 * RAYBOOT_TLS_CA_KEY names. Files are read as given (never under RAYBOOT_ROOT), bounded. With
 * RAY_USE_TLS off, t->on is false and nothing is read. -1 names the variable or file at fault. */
int raytls_load(const char *const *envp, const char *host, time_t now, struct raytls *t, struct errbuf *err);

/* raytls_load for this host (gethostname) and now. */
int raytls_load_here(const char *const *envp, struct raytls *t, struct errbuf *err);

/* raytls_load once, at start-up, for its errors and its log line ("Ray TLS: ..."), then
 * forgotten: the prober loads it again for itself. */
int raytls_check(const char *const *envp, struct errbuf *err);

/* Zeroes the key and frees everything. */
void raytls_free(struct raytls *t);

/* Reads a PEM file for TLS (the CA, a certificate, a key), bounded by TLSCERT_PEM_MAX_BYTES;
 * var names the variable that gave the path, for the message. */
int raytls_read_pem(const char *var, const char *path, char **out, size_t *len, struct errbuf *err);

#endif
