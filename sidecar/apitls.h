/* The sidecar's rule for the API server's certificate beyond mbedTLS's own checks: its name in a
 * subjectAltName, never in the CN alone (httpc_request's tls_setup). */
#ifndef RAYBOOT_APITLS_H
#define RAYBOOT_APITLS_H

#include <stdbool.h>

struct apitls {
    bool no_san; /* the last handshake was refused: the server's certificate has no subjectAltName */
};

/* httpc_request's tls_setup, ctx a struct apitls: tls_config is libcurl's mbedtls_ssl_config. */
int apitls_setup(void *tls_config, void *ctx);

#endif
