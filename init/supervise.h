/* The supervisor: rayboot as PID 1 (or subreaper) once Ray runs, until the last child is gone. */
#ifndef RAYBOOT_INIT_SUPERVISE_H
#define RAYBOOT_INIT_SUPERVISE_H

#include "pod.h"

/* Supervises until every child is gone; returns the pod's exit code. */
int supervise(struct pod *p);

#endif
