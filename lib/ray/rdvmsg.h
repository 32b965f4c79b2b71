/* The rendezvous' two messages (init/rendezvous.h) and the bounded parser workers read them with:
 * pure, so the prober, the worker's watch (init/rdvwatch.c) and the fuzz target share it. */
#ifndef RAYBOOT_RDVMSG_H
#define RAYBOOT_RDVMSG_H

#include <stddef.h>

/* The digit after the slash is its version: a worker that does not know it polls the GCS. */
#define RENDEZVOUS_MESSAGE "RAYBOOT-RDV/1 SERVING\n"
/* The head's command has ended: written to every connection still held, then closed. */
#define RENDEZVOUS_FINISHED_MESSAGE "RAYBOOT-RDV/1 FINISHED\n"
/* Nothing longer is ever looked at: what does not parse within it is not our head. */
#define RENDEZVOUS_READ_MAX 32

enum rendezvous_parse_result {
    RENDEZVOUS_INCOMPLETE = 0, /* a prefix of a message: read more */
    RENDEZVOUS_SERVING = 1,    /* RENDEZVOUS_MESSAGE, whole */
    RENDEZVOUS_FINISHED = 2,   /* RENDEZVOUS_FINISHED_MESSAGE, whole */
    RENDEZVOUS_BAD = -1,       /* anything else (another version, another service on the port) */
};

/* The message at the front of what a worker read so far (len bytes; at most RENDEZVOUS_READ_MAX
 * are looked at). *used is how many bytes a whole message took (0 otherwise): the caller drops
 * them and parses the rest, so "SERVING\nFINISHED\n" read at once is both. */
enum rendezvous_parse_result rendezvous_parse(const char *buf, size_t len, size_t *used);

#endif
