/* This pod's certificate and key for Ray's TLS, made at start-up from the CA's key and written
 * into a memory-backed directory (rayboot only: the sidecar keeps its own in memory). */
#ifndef RAYBOOT_TLSFILES_H
#define RAYBOOT_TLSFILES_H

#include "errbuf.h"
#include "plandata.h"
#include "strv.h"

/* With RAY_USE_TLS on, RAYBOOT_TLS_CA_KEY set and RAY_TLS_SERVER_CERT/KEY not both given: makes
 * the certificate for the plan's names and addresses (the pod's host name and name, the head's
 * names on the head, the pod IP, localhost and 127.0.0.1), writes RAYBOOT_TLS_DIR/tls.key (0600)
 * and tls.crt, and adds RAY_TLS_SERVER_CERT and RAY_TLS_SERVER_KEY naming them to ray_env.
 * Otherwise does nothing. -1 names the variable at fault (RAYBOOT_TLS_DIR unset or not
 * memory-backed, the CA's files). */
int tlsfiles_make(const struct plan *p, const char *const *envp, const char *hostname, struct strv *ray_env,
                  struct errbuf *err);

#endif
