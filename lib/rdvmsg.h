/* The rendezvous' one message (lib/rendezvous.h) and the bounded parser workers read it with:
 * pure, so the prober and the fuzz target share it. */
#ifndef RAYBOOT_RDVMSG_H
#define RAYBOOT_RDVMSG_H

#include <stddef.h>

/* The digit after the slash is its version: a worker that does not know it polls the GCS. */
#define RENDEZVOUS_MESSAGE "RAYBOOT-RDV/1 SERVING\n"
/* Nothing longer is ever read: what does not parse within it is not our head. */
#define RENDEZVOUS_READ_MAX 32

enum rendezvous_parse_result {
    RENDEZVOUS_INCOMPLETE = 0, /* a prefix of the message: read more */
    RENDEZVOUS_SERVING = 1,    /* the whole message */
    RENDEZVOUS_BAD = -1,       /* anything else (another version, another service on the port) */
};

/* What a worker read so far, len bytes (at most RENDEZVOUS_READ_MAX are looked at). */
enum rendezvous_parse_result rendezvous_parse(const char *buf, size_t len);

#endif
