/* /metrics in Prometheus' text format. */
#ifndef RAYBOOT_SIDECAR_METRICS_H
#define RAYBOOT_SIDECAR_METRICS_H

#include <stddef.h>

#include "sidecar.h"

void metrics_render(const struct sidecar *s, char *out, size_t cap);

#endif
