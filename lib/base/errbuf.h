/* The project's one way to hand a failure's human message to the caller that decides what to
 * do with it (log it, or exit 2 with it). */
#ifndef RAYBOOT_ERRBUF_H
#define RAYBOOT_ERRBUF_H

/* Room for a message naming a file or variable, its bad value (cut) and what was expected. */
#define ERRBUF_MAX_BYTES 1024

struct errbuf {
    char msg[ERRBUF_MAX_BYTES];
};

/* Always returns -1, so a failure path reads `return errbuf_set(err, ...);`. */
int errbuf_set(struct errbuf *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Puts "prefix: " in front of the message already there. */
int errbuf_prefix(struct errbuf *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
