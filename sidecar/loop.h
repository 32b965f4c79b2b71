/* The sidecar's event loop, and how the endpoints and SIGTERM ask it for a drain (draining.h). */
#ifndef RAYBOOT_SIDECAR_LOOP_H
#define RAYBOOT_SIDECAR_LOOP_H

#include <stdbool.h>

#include "sidecar.h"

/* Runs until SIGTERM's work is done (0) or the loop cannot go on (-1, logged). */
int sidecar_loop(struct sidecar *s);

/* Listens on the drain port (RAYBOOT_SIDECAR_DRAIN_PORT on 127.0.0.1): 0 with s->http_drain set,
 * or 0 with it NULL when another process holds the port (the loop tries again, the probes are
 * served meanwhile; err says so), or -1 with a message when it cannot listen there at all. */
int sidecar_listen_drain(struct sidecar *s, long now_ms, struct errbuf *err);

#endif
