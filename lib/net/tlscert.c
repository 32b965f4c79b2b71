/* A pod's certificate and key made with mbedTLS's key generator and X.509 writer, signed by a CA
 * the caller read; every byte of a private key this file held is zeroed before it is freed. What
 * the names are and where the PEM goes is lib/ray/raytls.c's. */
#include "tlscert.h"

#include <arpa/inet.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/ecp.h>
#include <mbedtls/entropy.h>
#include <mbedtls/oid.h>
#include <mbedtls/pk.h>
#include <mbedtls/x509_crt.h>
#include <psa/crypto.h>

/* A P-256 certificate with a dozen names is about 1 KiB of PEM, its key about 230 bytes. */
#define TLSCERT_OUT_MAX_BYTES 8192
/* RFC 5280: at most 20 octets; 16 random ones, the top bit clear so that it stays positive. */
#define TLSCERT_SERIAL_BYTES 16
/* "YYYYMMDDhhmmss", mbedTLS's form of a validity time. */
#define TLSCERT_TIME_BYTES 15

/* What one making holds, for one place that frees it all. */
struct maker {
    mbedtls_entropy_context entropy;
    mbedtls_ctr_drbg_context drbg;
    mbedtls_x509_crt ca;
    mbedtls_pk_context ca_key;
    mbedtls_pk_context key;
    mbedtls_x509write_cert crt;
    mbedtls_x509_san_list sans[TLSCERT_NAMES_MAX];
    unsigned char ips[TLSCERT_NAMES_MAX][sizeof(struct in6_addr)];
    unsigned char *pem_in; /* a NUL-terminated copy of an input PEM (mbedTLS wants the NUL) */
    size_t pem_in_len;
};

static void maker_init(struct maker *m)
{
    memset(m, 0, sizeof(*m));
    mbedtls_entropy_init(&m->entropy);
    mbedtls_ctr_drbg_init(&m->drbg);
    mbedtls_x509_crt_init(&m->ca);
    mbedtls_pk_init(&m->ca_key);
    mbedtls_pk_init(&m->key);
    mbedtls_x509write_crt_init(&m->crt);
}

static void drop_pem_in(struct maker *m)
{
    if (m->pem_in)
        explicit_bzero(m->pem_in, m->pem_in_len);
    free(m->pem_in);
    m->pem_in = NULL;
}

static void maker_free(struct maker *m)
{
    drop_pem_in(m);
    mbedtls_x509write_crt_free(&m->crt);
    mbedtls_pk_free(&m->key); /* mbedTLS zeroes key material it frees */
    mbedtls_pk_free(&m->ca_key);
    mbedtls_x509_crt_free(&m->ca);
    mbedtls_ctr_drbg_free(&m->drbg);
    mbedtls_entropy_free(&m->entropy);
}

/* mbedTLS parses PEM only from a buffer whose last byte is its NUL. */
static int pem_copy(struct maker *m, const char *pem, size_t len, const char *what, struct errbuf *err)
{
    drop_pem_in(m);
    if (!pem || len == 0 || len > TLSCERT_PEM_MAX_BYTES)
        return errbuf_set(err, "%s: empty or larger than %d bytes", what, TLSCERT_PEM_MAX_BYTES);
    m->pem_in = malloc(len + 1);
    if (!m->pem_in)
        return errbuf_set(err, "out of memory");
    memcpy(m->pem_in, pem, len);
    m->pem_in[len] = '\0';
    m->pem_in_len = len + 1;
    return 0;
}

static int read_ca(struct maker *m, const struct tlscert_request *req, struct errbuf *err)
{
    if (pem_copy(m, req->ca_cert_pem, req->ca_cert_len, "the CA certificate", err) < 0)
        return -1;
    if (mbedtls_x509_crt_parse(&m->ca, m->pem_in, m->pem_in_len) != 0)
        return errbuf_set(err, "the CA certificate is not a PEM X.509 certificate");
    /* basicConstraints has no accessor in mbedTLS 3: its field is private by name only. */
    if (!m->ca.MBEDTLS_PRIVATE(ca_istrue))
        return errbuf_set(err, "the CA certificate is not a CA (its basicConstraints say CA:FALSE or nothing)");
    if (pem_copy(m, req->ca_key_pem, req->ca_key_len, "the CA key", err) < 0)
        return -1;
    if (mbedtls_pk_parse_key(&m->ca_key, m->pem_in, m->pem_in_len, NULL, 0, mbedtls_ctr_drbg_random, &m->drbg) != 0)
        return errbuf_set(err, "the CA key is not an unencrypted PEM private key");
    drop_pem_in(m);
    if (mbedtls_pk_check_pair(&m->ca.pk, &m->ca_key, mbedtls_ctr_drbg_random, &m->drbg) != 0)
        return errbuf_set(err, "the CA key is not the key of the CA certificate");
    return 0;
}

static int utc_time(time_t t, char out[TLSCERT_TIME_BYTES])
{
    struct tm tm;
    char buf[32];
    if (!gmtime_r(&t, &tm) || strftime(buf, sizeof(buf), "%Y%m%d%H%M%S", &tm) != TLSCERT_TIME_BYTES - 1)
        return -1;
    memcpy(out, buf, TLSCERT_TIME_BYTES);
    return 0;
}

/* The subjectAltName list: DNS names, then addresses (as 4 or 16 bytes). */
static int set_sans(struct maker *m, const struct tlscert_request *req, struct errbuf *err)
{
    size_t n = 0;
    for (const char *const *d = req->dns_names; d && *d; d++, n++) {
        if (n == TLSCERT_NAMES_MAX)
            return errbuf_set(err, "more than %d names and addresses", TLSCERT_NAMES_MAX);
        m->sans[n].node.type = MBEDTLS_X509_SAN_DNS_NAME;
        m->sans[n].node.san.unstructured_name.p = (unsigned char *)(uintptr_t)*d;
        m->sans[n].node.san.unstructured_name.len = strlen(*d);
    }
    for (const char *const *a = req->ips; a && *a; a++, n++) {
        size_t len = sizeof(struct in_addr);
        if (n == TLSCERT_NAMES_MAX)
            return errbuf_set(err, "more than %d names and addresses", TLSCERT_NAMES_MAX);
        if (inet_pton(AF_INET, *a, m->ips[n]) != 1) {
            len = sizeof(struct in6_addr);
            if (inet_pton(AF_INET6, *a, m->ips[n]) != 1)
                return errbuf_set(err, "%.60s: not an IP address", *a);
        }
        m->sans[n].node.type = MBEDTLS_X509_SAN_IP_ADDRESS;
        m->sans[n].node.san.unstructured_name.p = m->ips[n];
        m->sans[n].node.san.unstructured_name.len = len;
    }
    if (n == 0)
        return errbuf_set(err, "no name or address to certify");
    /* mbedTLS writes ASN.1 from the end backwards: the list linked last to first comes out in the
     * order given. */
    for (size_t i = 1; i < n; i++)
        m->sans[i].next = &m->sans[i - 1];
    return mbedtls_x509write_crt_set_subject_alternative_name(&m->crt, &m->sans[n - 1]) == 0
               ? 0
               : errbuf_set(err, "mbedTLS refused the subjectAltName list");
}

static int set_usage(struct maker *m)
{
    mbedtls_asn1_sequence client = {{MBEDTLS_ASN1_OID, MBEDTLS_OID_SIZE(MBEDTLS_OID_CLIENT_AUTH),
                                     (unsigned char *)(uintptr_t)MBEDTLS_OID_CLIENT_AUTH},
                                    NULL};
    mbedtls_asn1_sequence server = {{MBEDTLS_ASN1_OID, MBEDTLS_OID_SIZE(MBEDTLS_OID_SERVER_AUTH),
                                     (unsigned char *)(uintptr_t)MBEDTLS_OID_SERVER_AUTH},
                                    &client};
    if (mbedtls_x509write_crt_set_basic_constraints(&m->crt, 0, -1) != 0 ||
        mbedtls_x509write_crt_set_key_usage(&m->crt, MBEDTLS_X509_KU_DIGITAL_SIGNATURE) != 0 ||
        mbedtls_x509write_crt_set_ext_key_usage(&m->crt, &server) != 0 ||
        mbedtls_x509write_crt_set_subject_key_identifier(&m->crt) != 0 ||
        mbedtls_x509write_crt_set_authority_key_identifier(&m->crt) != 0)
        return -1;
    return 0;
}

/* Subject, issuer (the CA's subject as the CA certificate has it), keys, serial and validity. */
static int set_identity(struct maker *m, const struct tlscert_request *req, struct errbuf *err)
{
    char issuer[1024], subject[300], not_before[TLSCERT_TIME_BYTES], not_after[TLSCERT_TIME_BYTES];
    unsigned char serial[TLSCERT_SERIAL_BYTES];

    if (mbedtls_x509_dn_gets(issuer, sizeof(issuer), &m->ca.subject) < 0)
        return errbuf_set(err, "the CA certificate's subject is too long");
    if (!req->common_name || !req->common_name[0] || strlen(req->common_name) > 64 ||
        strpbrk(req->common_name, ",+=\"\\<>;#"))
        return errbuf_set(err, "%.80s: not a name for a certificate's CN", req->common_name ? req->common_name : "");
    memcpy(subject, "CN=", 3);
    memcpy(subject + 3, req->common_name, strlen(req->common_name) + 1);
    if (req->valid_s <= 0 || utc_time(req->now - TLSCERT_BACKDATE_S, not_before) < 0 ||
        utc_time(req->now + req->valid_s, not_after) < 0)
        return errbuf_set(err, "the validity (%ld s from now) is not a time", req->valid_s);
    if (mbedtls_ctr_drbg_random(&m->drbg, serial, sizeof(serial)) != 0)
        return errbuf_set(err, "no random bytes for the serial");
    serial[0] &= 0x7f;
    serial[0] |= 0x01; /* never a leading zero byte: DER would want it dropped */
    mbedtls_x509write_crt_set_version(&m->crt, MBEDTLS_X509_CRT_VERSION_3);
    mbedtls_x509write_crt_set_md_alg(&m->crt, MBEDTLS_MD_SHA256);
    mbedtls_x509write_crt_set_subject_key(&m->crt, &m->key);
    mbedtls_x509write_crt_set_issuer_key(&m->crt, &m->ca_key);
    if (mbedtls_x509write_crt_set_subject_name(&m->crt, subject) != 0 ||
        mbedtls_x509write_crt_set_issuer_name(&m->crt, issuer) != 0)
        return errbuf_set(err, "mbedTLS could not write the subject or the issuer (%.200s)", issuer);
    if (mbedtls_x509write_crt_set_serial_raw(&m->crt, serial, sizeof(serial)) != 0 ||
        mbedtls_x509write_crt_set_validity(&m->crt, not_before, not_after) != 0)
        return errbuf_set(err, "mbedTLS could not write the serial or the validity");
    return 0;
}

static int write_out(struct maker *m, struct tlscert *out, struct errbuf *err)
{
    unsigned char *cert = calloc(1, TLSCERT_OUT_MAX_BYTES), *key = calloc(1, TLSCERT_OUT_MAX_BYTES);
    if (!cert || !key) {
        free(cert);
        free(key);
        return errbuf_set(err, "out of memory");
    }
    if (mbedtls_x509write_crt_pem(&m->crt, cert, TLSCERT_OUT_MAX_BYTES, mbedtls_ctr_drbg_random, &m->drbg) != 0 ||
        mbedtls_pk_write_key_pem(&m->key, key, TLSCERT_OUT_MAX_BYTES) != 0) {
        explicit_bzero(key, TLSCERT_OUT_MAX_BYTES);
        free(cert);
        free(key);
        return errbuf_set(err, "mbedTLS could not write the certificate or the key");
    }
    out->cert_pem = (char *)cert;
    out->cert_len = strlen(out->cert_pem);
    out->key_pem = (char *)key;
    out->key_len = strlen(out->key_pem);
    return 0;
}

/* Every step in order; the first that fails says why. */
static int make(struct maker *m, const struct tlscert_request *req, struct tlscert *out, struct errbuf *err)
{
    if (psa_crypto_init() != PSA_SUCCESS || mbedtls_ctr_drbg_seed(&m->drbg, mbedtls_entropy_func, &m->entropy,
                                                                  (const unsigned char *)"rayboot-tls", 11) != 0)
        return errbuf_set(err, "no entropy for a key (getrandom failed)");
    if (read_ca(m, req, err) < 0)
        return -1;
    if (mbedtls_pk_setup(&m->key, mbedtls_pk_info_from_type(MBEDTLS_PK_ECKEY)) != 0 ||
        mbedtls_ecp_gen_key(MBEDTLS_ECP_DP_SECP256R1, mbedtls_pk_ec(m->key), mbedtls_ctr_drbg_random, &m->drbg) != 0)
        return errbuf_set(err, "mbedTLS could not make a P-256 key");
    if (set_identity(m, req, err) < 0 || set_sans(m, req, err) < 0)
        return -1;
    if (set_usage(m) < 0)
        return errbuf_set(err, "mbedTLS could not write the certificate's extensions");
    return write_out(m, out, err);
}

int tlscert_make(const struct tlscert_request *req, struct tlscert *out, struct errbuf *err)
{
    struct maker *m = malloc(sizeof(*m));
    int rc;
    memset(out, 0, sizeof(*out));
    if (!m)
        return errbuf_set(err, "out of memory");
    maker_init(m);
    rc = make(m, req, out, err);
    maker_free(m);
    explicit_bzero(m, sizeof(*m));
    free(m);
    return rc;
}

void tlscert_free(struct tlscert *c)
{
    if (c->key_pem)
        explicit_bzero(c->key_pem, TLSCERT_OUT_MAX_BYTES);
    free(c->key_pem);
    free(c->cert_pem);
    memset(c, 0, sizeof(*c));
}
