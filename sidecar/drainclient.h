/* `rayboot-sidecar drain`: asks the sidecar of this pod to drain its node and waits for the
 * answer, for a preStop exec hook in the Ray container. The drain port is on 127.0.0.1, so this
 * runs inside the pod (any of its containers that has the binary). */
#ifndef RAYBOOT_SIDECAR_DRAINCLIENT_H
#define RAYBOOT_SIDECAR_DRAINCLIENT_H

#include "exitcode.h"

/* Exit codes of `rayboot-sidecar drain` beyond the project's (0 drained or accepted, 2 usage). */
#define DRAINCLIENT_EXIT_NOT_DRAINED 1                 /* the sidecar answered: the drain could not be made */
#define DRAINCLIENT_EXIT_NO_SIDECAR EXIT_WAIT_DEADLINE /* no answer from the sidecar (not listening, or too slow) */

/* POSTs /drain to 127.0.0.1:port, with ?deadline=deadline_s unless it is 0; prints the answer on
 * stdout and returns the exit code. */
int drainclient_run(int port, long deadline_s);

#endif
