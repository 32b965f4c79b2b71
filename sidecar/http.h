/* A small HTTP server for the sidecar: libmicrohttpd driven from the caller's own epoll loop (no
 * threads), every connection bounded (in number, the oldest idle one giving way to a new one; in
 * time), and connections that must wait for something suspended rather than blocking anyone. What
 * each request gets is the handler's: this module knows nothing of the sidecar. */
#ifndef RAYBOOT_SIDECAR_HTTP_H
#define RAYBOOT_SIDECAR_HTTP_H

#include <stdbool.h>

#include "errbuf.h"

struct http_server;

struct http_answer {
    int status;
    const char *content_type;
    char body[4096];
    char proof[72]; /* the X-Rayboot-Proof header's value (sidecar/drainproof.h), "" for none */
};

struct http_request {
    const char *method;
    const char *path;
    bool resumed;          /* the handler suspended this request before and is asked again */
    const char *nonce;     /* the X-Rayboot-Nonce header's value, or NULL (sidecar/drainproof.h) */
    const char *ray_start; /* the X-Rayboot-Ray-Start header's value, or NULL (sidecar/drainclient.h) */
};

/* Fills *a, or sets *suspend to answer later (after http_resume_waiters, when it is called again
 * with req->resumed). A request that carries a body never reaches it (413). */
typedef void (*http_handler_fn)(void *ctx, const struct http_request *req, struct http_answer *a, bool *suspend);

/* Listens on addr (an IPv4 address; NULL: every address) at port (0: any free port). NULL with a
 * message on failure, and *in_use (if not NULL) true when another socket holds the port. */
struct http_server *http_start(const char *addr, int port, http_handler_fn handler, void *ctx, bool *in_use,
                               struct errbuf *err);
int http_bound_port(const struct http_server *h);
/* One fd for the caller's epoll: readable when the server has work. */
int http_fd(const struct http_server *h);
/* Does the pending work and cuts connections past their deadline; call when http_fd is readable
 * and when http_timeout_ms passes. */
void http_run(struct http_server *h);
/* Milliseconds until the server needs http_run for a timeout, or -1. */
long http_timeout_ms(struct http_server *h);
/* Asks every suspended request again (the handler sees req->resumed). */
void http_resume_waiters(struct http_server *h);
/* Connections refused or cut so far: making way for a newer one, past the deadline, or with a
 * body. */
unsigned long http_refused(const struct http_server *h);
void http_stop(struct http_server *h);

#endif
