/* What the sidecar's two ports answer: the probes port (/healthz, /readyz, /metrics) and the drain
 * port (POST /drain). Handlers for http.c; the drain itself is draining.c's. */
#ifndef RAYBOOT_SIDECAR_ENDPOINTS_H
#define RAYBOOT_SIDECAR_ENDPOINTS_H

#include <stdbool.h>

#include "http.h"

/* ctx is the struct sidecar. */
void endpoints_probes(void *ctx, const struct http_request *req, struct http_answer *a, bool *suspend);
void endpoints_drain(void *ctx, const struct http_request *req, struct http_answer *a, bool *suspend);

#endif
