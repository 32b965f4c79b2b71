/* Version reporting: the library versions make a bug report self-describing. What only one
 * program links (the sidecar's HTTP server) that program adds itself (MORE). */
#include "version.h"

#include <ares.h>
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <mbedtls/build_info.h>
#include <nghttp2/nghttp2.h>
#include <seccomp.h>

/* deps/build.sh applies deps/mbedtls-tls12-rsa-pss.patch to every mbedTLS it builds (and stops when
 * the source already has upstream's fix), so both binaries' TLS carries it: say which bug, and
 * where upstream fixed it, for whoever checks this build against an advisory. */
#define MBEDTLS_PATCH_LINE                                                                                             \
    "mbedTLS patch: a TLS 1.2 server's RSA-PSS signature is accepted (Mbed-TLS/mbedtls#10668, fixed "                  \
    "upstream in #10672, backport #10674; deps/mbedtls-tls12-rsa-pss.patch)"

void version_print(FILE *out, const char *program, const char *more)
{
    const curl_version_info_data *curl = curl_version_info(CURLVERSION_NOW);
    const struct scmp_version *scmp = seccomp_version();
    const nghttp2_info *h2 = nghttp2_version(0);
    fprintf(out, "%s %s (libcurl %s, c-ares %s, nghttp2 %s, libseccomp %u.%u.%u, cJSON %s, musl %s, mbedTLS %s%s%s)\n",
            program, RAYBOOT_VERSION, curl->version, ares_version(NULL), h2->version_str, scmp->major, scmp->minor,
            scmp->micro, cJSON_Version(), RAYBOOT_MUSL_VERSION, MBEDTLS_VERSION_STRING, more ? ", " : "",
            more ? more : "");
    fputs(MBEDTLS_PATCH_LINE "\n", out);
}
