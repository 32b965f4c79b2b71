/* Unit tests for lib/net/tlscert.c: a pod's certificate made from the test CA
 * (tests/unit/data/tls/, made with openssl) is read back by two parsers, mbedTLS's and OpenSSL's
 * (gRPC's BoringSSL is OpenSSL's kin): its subjectAltName entries, validity, key usages, that it
 * is no CA, that it chains to the CA and names what was asked for (and nothing else), that the key
 * is its key; and what is refused: a CA key of another CA, a CA certificate that is no CA, names
 * that are not addresses, too many names, none. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/oid.h>
#include <mbedtls/pk.h>
#include <mbedtls/x509_crt.h>
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include "tlscert.h"

#define NOW ((time_t)1800000000) /* 2027-01-15 08:00:00 UTC */
#define DAY_S 86400L

static const char *const names[] = {"j-head-0", "j-head-0.j", "j-head-0.j.ns.svc.cluster.local", "localhost", NULL};
static const char *const ips[] = {"10.244.0.17", "127.0.0.1", "fd00::17", NULL};

static char *slurp(const char *name, size_t *len)
{
    char path[256];
    FILE *f;
    char *buf = calloc(1, 65536);
    snprintf(path, sizeof(path), "tests/unit/data/tls/%s", name);
    f = fopen(path, "rb");
    assert_non_null(f);
    assert_non_null(buf);
    *len = fread(buf, 1, 65535, f);
    fclose(f);
    return buf;
}

struct inputs {
    char *ca_cert, *ca_key;
    size_t ca_cert_len, ca_key_len;
};

static void load(struct inputs *in, const char *cert, const char *key)
{
    in->ca_cert = slurp(cert, &in->ca_cert_len);
    in->ca_key = slurp(key, &in->ca_key_len);
}

static void unload(struct inputs *in)
{
    free(in->ca_cert);
    free(in->ca_key);
}

static struct tlscert_request request(const struct inputs *in)
{
    struct tlscert_request r = {in->ca_cert, in->ca_cert_len, in->ca_key, in->ca_key_len, "j-head-0", names, ips, NOW,
                                DAY_S};
    return r;
}

static void make(const char *ca, const char *ca_key, struct tlscert *out)
{
    struct inputs in;
    struct tlscert_request r;
    struct errbuf err = {""};
    load(&in, ca, ca_key);
    r = request(&in);
    if (tlscert_make(&r, out, &err) != 0)
        fail_msg("tlscert_make: %s", err.msg);
    unload(&in);
}

static void parse(mbedtls_x509_crt *crt, const char *pem, size_t len)
{
    mbedtls_x509_crt_init(crt);
    assert_int_equal(mbedtls_x509_crt_parse(crt, (const unsigned char *)pem, len + 1), 0);
}

/* Every subjectAltName entry, as text: "DNS:name" or "IP:a.b.c.d" / "IP:16 bytes". */
static void sans_of(const mbedtls_x509_crt *crt, char *out, size_t cap)
{
    out[0] = '\0';
    for (const mbedtls_x509_sequence *s = &crt->subject_alt_names; s && s->buf.p; s = s->next) {
        mbedtls_x509_subject_alternative_name san;
        char one[300];
        assert_int_equal(mbedtls_x509_parse_subject_alt_name(&s->buf, &san), 0);
        if (san.type == MBEDTLS_X509_SAN_DNS_NAME)
            snprintf(one, sizeof(one), "DNS:%.*s ", (int)(san.san.unstructured_name.len & 0xff),
                     san.san.unstructured_name.p);
        else if (san.type == MBEDTLS_X509_SAN_IP_ADDRESS && san.san.unstructured_name.len == 4)
            snprintf(one, sizeof(one), "IP:%u.%u.%u.%u ", san.san.unstructured_name.p[0],
                     san.san.unstructured_name.p[1], san.san.unstructured_name.p[2], san.san.unstructured_name.p[3]);
        else
            snprintf(one, sizeof(one), "IP:%zu bytes ", san.san.unstructured_name.len);
        strncat(out, one, cap - strlen(out) - 1);
        mbedtls_x509_free_subject_alt_name(&san);
    }
}

static void test_names_and_addresses_are_the_sans(void **state)
{
    struct tlscert c;
    mbedtls_x509_crt crt;
    char sans[1024];
    (void)state;
    make("ca.crt", "ca.key", &c);
    parse(&crt, c.cert_pem, c.cert_len);
    sans_of(&crt, sans, sizeof(sans));
    assert_string_equal(sans, "DNS:j-head-0 DNS:j-head-0.j DNS:j-head-0.j.ns.svc.cluster.local DNS:localhost "
                              "IP:10.244.0.17 IP:127.0.0.1 IP:16 bytes ");
    mbedtls_x509_crt_free(&crt);
    tlscert_free(&c);
}

static void test_validity_usage_and_not_a_ca(void **state)
{
    struct tlscert c;
    mbedtls_x509_crt crt;
    char subject[256], issuer[256], ca_subject[256];
    mbedtls_x509_crt ca;
    size_t len;
    char *ca_pem = slurp("ca.crt", &len);
    (void)state;
    make("ca.crt", "ca.key", &c);
    parse(&crt, c.cert_pem, c.cert_len);
    parse(&ca, ca_pem, len);
    /* 2027-01-15 08:00:00 less 300 s, and a day later. */
    assert_int_equal(crt.valid_from.year, 2027);
    assert_int_equal(crt.valid_from.mon, 1);
    assert_int_equal(crt.valid_from.day, 15);
    assert_int_equal(crt.valid_from.hour, 7);
    assert_int_equal(crt.valid_from.min, 55);
    assert_int_equal(crt.valid_to.day, 16);
    assert_int_equal(crt.valid_to.hour, 8);
    assert_int_equal(crt.valid_to.min, 0);
    assert_int_equal(crt.version, 3);
    assert_int_equal(crt.MBEDTLS_PRIVATE(ca_istrue), 0);
    assert_int_equal(mbedtls_x509_crt_check_key_usage(&crt, MBEDTLS_X509_KU_DIGITAL_SIGNATURE), 0);
    assert_int_not_equal(mbedtls_x509_crt_check_key_usage(&crt, MBEDTLS_X509_KU_KEY_CERT_SIGN), 0);
    assert_int_equal(mbedtls_x509_crt_check_extended_key_usage(&crt, MBEDTLS_OID_SERVER_AUTH,
                                                               MBEDTLS_OID_SIZE(MBEDTLS_OID_SERVER_AUTH)),
                     0);
    assert_int_equal(mbedtls_x509_crt_check_extended_key_usage(&crt, MBEDTLS_OID_CLIENT_AUTH,
                                                               MBEDTLS_OID_SIZE(MBEDTLS_OID_CLIENT_AUTH)),
                     0);
    assert_int_equal(crt.MBEDTLS_PRIVATE(sig_md), MBEDTLS_MD_SHA256);
    assert_int_equal(mbedtls_pk_get_type(&crt.pk), MBEDTLS_PK_ECKEY);
    assert_int_equal(mbedtls_pk_get_bitlen(&crt.pk), 256);
    mbedtls_x509_dn_gets(subject, sizeof(subject), &crt.subject);
    mbedtls_x509_dn_gets(issuer, sizeof(issuer), &crt.issuer);
    mbedtls_x509_dn_gets(ca_subject, sizeof(ca_subject), &ca.subject);
    assert_string_equal(subject, "CN=j-head-0");
    assert_string_equal(issuer, ca_subject);
    assert_true(crt.serial.len >= 16);
    mbedtls_x509_crt_free(&crt);
    mbedtls_x509_crt_free(&ca);
    free(ca_pem);
    tlscert_free(&c);
}

/* mbedTLS's own verification, as libcurl does it: the CA, and a name or an address. */
static uint32_t verify_flags(const struct tlscert *c, const char *ca_file, const char *cn)
{
    mbedtls_x509_crt crt, ca;
    size_t len;
    char *ca_pem = slurp(ca_file, &len);
    uint32_t flags = 0;
    parse(&crt, c->cert_pem, c->cert_len);
    parse(&ca, ca_pem, len);
    (void)mbedtls_x509_crt_verify(&crt, &ca, NULL, cn, &flags, NULL, NULL);
    mbedtls_x509_crt_free(&crt);
    mbedtls_x509_crt_free(&ca);
    free(ca_pem);
    return flags;
}

static void test_it_chains_to_its_ca_for_its_names_only(void **state)
{
    struct tlscert c;
    (void)state;
    make("ca.crt", "ca.key", &c);
    /* NOW is in the future: the only flag left is "not yet valid", which says nothing else failed. */
    assert_int_equal(
        verify_flags(&c, "ca.crt", "j-head-0.j.ns.svc.cluster.local") & ~(uint32_t)MBEDTLS_X509_BADCERT_FUTURE, 0);
    assert_int_equal(verify_flags(&c, "ca.crt", "10.244.0.17") & ~(uint32_t)MBEDTLS_X509_BADCERT_FUTURE, 0);
    assert_true(verify_flags(&c, "ca.crt", "j-worker-0.j") & MBEDTLS_X509_BADCERT_CN_MISMATCH);
    assert_true(verify_flags(&c, "ca.crt", "10.244.0.18") & MBEDTLS_X509_BADCERT_CN_MISMATCH);
    assert_true(verify_flags(&c, "other-ca.crt", "j-head-0.j") & MBEDTLS_X509_BADCERT_NOT_TRUSTED);
    tlscert_free(&c);
}

/* OpenSSL's reading of the same: the signature by the CA's key, the name and address checks. */
static void test_openssl_reads_it_the_same(void **state)
{
    struct tlscert c;
    size_t len;
    char *ca_pem = slurp("ca.crt", &len);
    BIO *b1, *b2;
    X509 *crt, *ca;
    EVP_PKEY *ca_pub;
    (void)state;
    make("ca.crt", "ca.key", &c);
    b1 = BIO_new_mem_buf(c.cert_pem, (int)c.cert_len);
    b2 = BIO_new_mem_buf(ca_pem, (int)len);
    crt = PEM_read_bio_X509(b1, NULL, NULL, NULL);
    ca = PEM_read_bio_X509(b2, NULL, NULL, NULL);
    assert_non_null(crt);
    assert_non_null(ca);
    ca_pub = X509_get_pubkey(ca);
    assert_int_equal(X509_verify(crt, ca_pub), 1);
    assert_int_equal(X509_check_issued(ca, crt), X509_V_OK);
    assert_int_equal(X509_check_host(crt, "j-head-0.j", 0, 0, NULL), 1);
    assert_int_equal(X509_check_host(crt, "j-worker-0.j", 0, 0, NULL), 0);
    assert_int_equal(X509_check_ip_asc(crt, "fd00::17", 0), 1);
    assert_int_equal(X509_check_ip_asc(crt, "10.244.0.17", 0), 1);
    assert_int_equal(X509_check_ip_asc(crt, "10.244.0.99", 0), 0);
    assert_int_equal(X509_check_ca(crt), 0);
    assert_int_equal(X509_check_purpose(crt, X509_PURPOSE_SSL_SERVER, 0), 1);
    assert_int_equal(X509_check_purpose(crt, X509_PURPOSE_SSL_CLIENT, 0), 1);
    EVP_PKEY_free(ca_pub);
    X509_free(crt);
    X509_free(ca);
    BIO_free(b1);
    BIO_free(b2);
    free(ca_pem);
    tlscert_free(&c);
}

static void test_the_key_is_the_certificates(void **state)
{
    struct tlscert c, other;
    mbedtls_x509_crt crt;
    mbedtls_pk_context key;
    mbedtls_entropy_context entropy;
    mbedtls_ctr_drbg_context drbg;
    (void)state;
    make("ca.crt", "ca.key", &c);
    make("other-ca.crt", "other-ca.key", &other); /* an RSA CA signs as well */
    assert_non_null(strstr(c.key_pem, "-----BEGIN EC PRIVATE KEY-----"));
    mbedtls_entropy_init(&entropy);
    mbedtls_ctr_drbg_init(&drbg);
    assert_int_equal(mbedtls_ctr_drbg_seed(&drbg, mbedtls_entropy_func, &entropy, NULL, 0), 0);
    mbedtls_pk_init(&key);
    assert_int_equal(mbedtls_pk_parse_key(&key, (const unsigned char *)c.key_pem, c.key_len + 1, NULL, 0,
                                          mbedtls_ctr_drbg_random, &drbg),
                     0);
    parse(&crt, c.cert_pem, c.cert_len);
    assert_int_equal(mbedtls_pk_check_pair(&crt.pk, &key, mbedtls_ctr_drbg_random, &drbg), 0);
    mbedtls_x509_crt_free(&crt);
    /* Two makings, two keys. */
    parse(&crt, other.cert_pem, other.cert_len);
    assert_int_not_equal(mbedtls_pk_check_pair(&crt.pk, &key, mbedtls_ctr_drbg_random, &drbg), 0);
    mbedtls_x509_crt_free(&crt);
    mbedtls_pk_free(&key);
    mbedtls_ctr_drbg_free(&drbg);
    mbedtls_entropy_free(&entropy);
    tlscert_free(&c);
    tlscert_free(&other);
}

static void refused(const char *ca, const char *ca_key, const char *const *dns, const char *const *addrs,
                    const char *why)
{
    struct inputs in;
    struct tlscert_request r;
    struct tlscert c;
    struct errbuf err = {""};
    load(&in, ca, ca_key);
    r = request(&in);
    r.dns_names = dns;
    r.ips = addrs;
    assert_int_equal(tlscert_make(&r, &c, &err), -1);
    assert_null(c.cert_pem);
    assert_null(c.key_pem);
    if (!strstr(err.msg, why))
        fail_msg("expected \"%s\" in \"%s\"", why, err.msg);
    unload(&in);
}

static void test_what_is_refused(void **state)
{
    static const char *const bad_ip[] = {"10.244.0.300", NULL};
    static const char *const none[] = {NULL};
    static const char *const many[] = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", NULL};
    (void)state;
    refused("ca.crt", "other-ca.key", names, ips, "the CA key is not the key of the CA certificate");
    refused("leaf.crt", "leaf.key", names, ips, "the CA certificate is not a CA");
    refused("ca.crt", "ca.crt", names, ips, "the CA key is not an unencrypted PEM private key");
    refused("ca.key", "ca.key", names, ips, "the CA certificate is not a PEM X.509 certificate");
    refused("ca.crt", "ca.key", names, bad_ip, "10.244.0.300: not an IP address");
    refused("ca.crt", "ca.key", none, none, "no name or address to certify");
    refused("ca.crt", "ca.key", many, ips, "more than 16 names and addresses");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_and_addresses_are_the_sans),
        cmocka_unit_test(test_validity_usage_and_not_a_ca),
        cmocka_unit_test(test_it_chains_to_its_ca_for_its_names_only),
        cmocka_unit_test(test_openssl_reads_it_the_same),
        cmocka_unit_test(test_the_key_is_the_certificates),
        cmocka_unit_test(test_what_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
