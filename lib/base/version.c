/* Version reporting: the library versions make a bug report self-describing. What only one
 * program links (the sidecar's HTTP server and TLS) that program adds itself (MORE). */
#include "version.h"

#include <ares.h>
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <nghttp2/nghttp2.h>
#include <seccomp.h>

void version_print(FILE *out, const char *program, const char *more)
{
    const curl_version_info_data *curl = curl_version_info(CURLVERSION_NOW);
    const struct scmp_version *scmp = seccomp_version();
    const nghttp2_info *h2 = nghttp2_version(0);
    fprintf(out, "%s %s (libcurl %s, c-ares %s, nghttp2 %s, libseccomp %u.%u.%u, cJSON %s, musl %s%s%s)\n", program,
            RAYBOOT_VERSION, curl->version, ares_version(NULL), h2->version_str, scmp->major, scmp->minor, scmp->micro,
            cJSON_Version(), RAYBOOT_MUSL_VERSION, more ? ", " : "", more ? more : "");
}
