/* The seccomp allowlist for the prober: the process that parses DNS and HTTP/2 from the network.
 * Never applied to a process that will exec Ray or the user's command (filters are inherited). */
#ifndef RAYBOOT_SANDBOX_H
#define RAYBOOT_SANDBOX_H

#include "errbuf.h"

/* Sets no_new_privs and loads the filter into the calling process. Anything outside the list
 * kills the process (SIGSYS). */
int sandbox_confine_prober(struct errbuf *err);

#endif
