/* `rayboot-sidecar drain`: asks the sidecar of this pod to drain its node and waits for the
 * answer, for a preStop exec hook in the Ray container. The drain port is on 127.0.0.1, so this
 * runs inside the pod (any of its containers that has the binary). */
#ifndef RAYBOOT_SIDECAR_DRAINCLIENT_H
#define RAYBOOT_SIDECAR_DRAINCLIENT_H

#include "errbuf.h"
#include "exitcode.h"

/* Exit codes of `rayboot-sidecar drain` beyond the project's (0 drained or accepted, 2 usage). */
#define DRAINCLIENT_EXIT_NOT_DRAINED 1                 /* the sidecar answered: the drain could not be made */
#define DRAINCLIENT_EXIT_NO_SIDECAR EXIT_WAIT_DEADLINE /* no answer from the sidecar (not listening, or too slow) */

/* --deadline=SECONDS, which the shipped manifests before the sidecar chose its own deadline pass:
 * whole seconds from 1 to an hour, or -1 with a message naming the flag. Checked, so that a typo
 * still fails; never sent. */
int drainclient_deadline_check(const char *text, struct errbuf *err);

/* POSTs /drain to 127.0.0.1:port (the sidecar chooses the deadline); prints the answer on stdout
 * and returns the exit code. */
int drainclient_run(int port);

#endif
