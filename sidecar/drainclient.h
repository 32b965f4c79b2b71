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
/* EX_PROTOCOL: what holds the drain port is not the sidecar (no proof, a wrong one, or no answer to
 * GET /hello within 2 s); nothing was drained by this call. */
#define DRAINCLIENT_EXIT_NOT_THE_SIDECAR 76
/* EX_NOPERM: the sidecar refused: this pod is not being deleted (409); nothing drained. */
#define DRAINCLIENT_EXIT_REFUSED 77

/* Sent with POST /drain when this container's `ray start` will act on the kubelet's SIGTERM
 * whatever the drain does to its node, so the sidecar has no reason to hold the drain of a node
 * that has just joined (draining.c): "rayboot" when PID 1 is rayboot (`ray start` is its child,
 * stopped 1 s after SIGTERM once the node is drained, whatever Ray's start-up is doing);
 * "blocking" when PID 1 is Ray's own `ray start --block` and past its wait for its node. */
#define DRAINCLIENT_RAY_START_HEADER "X-Rayboot-Ray-Start"
#define DRAINCLIENT_RAY_START_RAYBOOT "rayboot"
#define DRAINCLIENT_RAY_START_BLOCKING "blocking"

/* --deadline=SECONDS, which the shipped manifests before the sidecar chose its own deadline pass:
 * whole seconds from 1 to an hour, or -1 with a message naming the flag. Checked, so that a typo
 * still fails; never sent. */
int drainclient_deadline_check(const char *text, struct errbuf *err);

/* GET /hello, then POST /drain to 127.0.0.1:port (the sidecar chooses the deadline), each answer
 * proven with Ray's token from envp where one is set; prints the drain's answer on stdout and
 * returns the exit code. */
int drainclient_run(int port, const char *const *envp);

#endif
