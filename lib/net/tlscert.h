/* One pod's TLS certificate, made in memory from a CA (Ray's TLS, docs/tls.md): a fresh P-256
 * key, a certificate the CA signs for the pod's own names and addresses, valid for a short time,
 * for both ends of TLS (Ray's gRPC is mutual). What goes in, where the result goes and who reads
 * it are the caller's (lib/ray/raytls.c); nothing here touches a file. */
#ifndef RAYBOOT_TLSCERT_H
#define RAYBOOT_TLSCERT_H

#include <stddef.h>
#include <time.h>

#include "errbuf.h"

/* A CA's certificate or key file is a few KiB; past this it is not one. */
#define TLSCERT_PEM_MAX_BYTES (64 * 1024)
/* A pod has a few names (hostname, its Service's forms) and an address or two. */
#define TLSCERT_NAMES_MAX 16
/* The certificate starts this long before now, for clocks a little behind this node's. */
#define TLSCERT_BACKDATE_S 300

struct tlscert_request {
    const char *ca_cert_pem; /* the CA's certificate, PEM (ca_cert_len bytes, no NUL needed) */
    size_t ca_cert_len;
    const char *ca_key_pem; /* its private key, PEM, unencrypted */
    size_t ca_key_len;
    const char *common_name;      /* the subject's CN: the pod's name */
    const char *const *dns_names; /* subjectAltName dNSName entries, NULL-terminated */
    const char *const *ips;       /* subjectAltName iPAddress entries (IPv4 or IPv6 text), NULL-terminated */
    time_t now;
    long valid_s; /* notAfter = now + valid_s; notBefore = now - TLSCERT_BACKDATE_S */
};

/* The result: two NUL-terminated PEM texts. The key's bytes are zeroed by tlscert_free. */
struct tlscert {
    char *cert_pem;
    size_t cert_len;
    char *key_pem;
    size_t key_len;
};

/* Makes the key and the certificate: X.509 v3, SHA-256 with the CA's key, not a CA
 * (basicConstraints), keyUsage digitalSignature, extendedKeyUsage serverAuth and clientAuth, the
 * names and addresses as subjectAltName, subject and authority key identifiers, a random 128-bit
 * serial. The CA's certificate must be a CA (basicConstraints CA) and match its key. 0, or -1 with
 * the reason (which input, never a key's bytes). */
int tlscert_make(const struct tlscert_request *req, struct tlscert *out, struct errbuf *err);
void tlscert_free(struct tlscert *c);

#endif
