/* GCS fault tolerance's last step on the head: the GCS's storage namespace in the external Redis
 * deleted once the job's command has ended and Ray has stopped. */
#ifndef RAYBOOT_INIT_STORECLEAN_H
#define RAYBOOT_INIT_STORECLEAN_H

#include <stdbool.h>
#include <sys/types.h>

#include "errbuf.h"

/* The head keeps its state in Redis under a namespace it was given: RAY_REDIS_ADDRESS and
 * RAY_external_storage_namespace both set (Ray's own variables, as KubeRay sets them). */
bool storeclean_wanted(const char *const *envp);
/* The head's word at start when Redis is given without a namespace: Ray then keeps every cluster
 * of that Redis under "default", and a new job starts from the last one's state. */
void storeclean_check(const char *const *envp);

/* Starts the deletion: Ray's own cleanup_redis_storage (the function KubeRay's cleanup Job runs)
 * in the Python that `ray` runs with (its #! line), a fixed program that reads the address, the
 * namespace and REDIS_PASSWORD / REDIS_USERNAME from envp. -1 with a message when it cannot. */
int storeclean_start(const char *root, char *const envp[], const char *ray, pid_t *pid, struct errbuf *err);

#endif
