/* The sidecar's HTTP server: libmicrohttpd driven from the sidecar's own epoll loop (no threads),
 * with connections that wait for a drain suspended rather than blocking anyone. What each path
 * answers is endpoints.c's. */
#ifndef RAYBOOT_SIDECAR_HTTP_H
#define RAYBOOT_SIDECAR_HTTP_H

#include "errbuf.h"
#include "sidecar.h"

/* Listens on every address at port (0: any free port). NULL with a message on failure. */
struct http_server *http_start(int port, struct sidecar *s, struct errbuf *err);
int http_bound_port(const struct http_server *h);
/* One fd for the caller's epoll: readable when the server has work. */
int http_fd(const struct http_server *h);
/* Does the pending work; call when http_fd is readable and when http_timeout_ms passes. */
void http_run(struct http_server *h);
/* Milliseconds until the server needs http_run for a timeout, or -1. */
long http_timeout_ms(struct http_server *h);
/* Lets every connection waiting for the drain get its answer. */
void http_resume_waiters(struct http_server *h);
void http_stop(struct http_server *h);

#endif
