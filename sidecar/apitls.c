/* The API server's certificate must name it in a subjectAltName, as Go's client and kubectl
 * require: mbedTLS 3.6 falls back to the subject's CN when a certificate has no subjectAltName
 * extension, and that fallback is refused here. Trusting the chain and matching the name within
 * the subjectAltName are mbedTLS's; the request is kubeapi.c's. */
#include "apitls.h"

#include <mbedtls/oid.h>
#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>

/* mbedTLS calls this for each certificate of the chain, the server's own at depth 0, after its
 * own checks; a flag set here fails the handshake (libcurl: the peer's certificate was not OK). */
static int require_san(void *ctx, mbedtls_x509_crt *crt, int depth, uint32_t *flags)
{
    struct apitls *t = ctx;
    if (depth == 0 && !mbedtls_x509_crt_has_ext_type(crt, MBEDTLS_X509_EXT_SUBJECT_ALT_NAME)) {
        *flags |= MBEDTLS_X509_BADCERT_CN_MISMATCH;
        t->no_san = true;
    }
    return 0;
}

int apitls_setup(void *tls_config, void *ctx)
{
    struct apitls *t = ctx;
    t->no_san = false;
    /* This replaces libcurl's own callback, which only relaxes checks for CURLOPT_SSL_VERIFYPEER
     * or VERIFYHOST off (never here) and writes to an error buffer this program does not read. */
    mbedtls_ssl_conf_verify(tls_config, require_san, t);
    return 0;
}
