/* Whether /dev/shm can hold the object store Ray will size for itself: Ray puts the store on disk
 * (with one warning in a log few read) when /dev/shm is smaller, and a container runtime's
 * /dev/shm is 64 MiB. */
#ifndef RAYBOOT_SHM_H
#define RAYBOOT_SHM_H

#include "strv.h"

/* Ray 2.60's numbers (ray/_private/ray_constants.py, utils.py resolve_object_store_memory):
 * the store takes 30% of the memory available, at most 200 GB, and, unless it is given, at most
 * 95% of /dev/shm's free space but never less than 10 GB for that cap. */
#define SHM_STORE_PERCENT_OF_MEMORY 30ULL
#define SHM_STORE_MAX_BYTES 200000000000ULL
#define SHM_CAP_FLOOR_BYTES 10000000000ULL
#define SHM_CAP_PERCENT_OF_SHM 95ULL

/* The object store Ray will make: given (--object-store-memory, 0 if none), else from
 * memory_bytes (the container's memory limit; 0: unknown, and so is the store: 0). */
unsigned long long shm_object_store_bytes(unsigned long long memory_bytes, unsigned long long given,
                                          unsigned long long shm_free);

/* Free bytes in root + /dev/shm as Ray counts them (statvfs: f_bavail x f_bsize). -1 with errno
 * when it cannot be measured (ENOENT: no /dev/shm). */
int shm_free_bytes(const char *root, unsigned long long *bytes);

/* Appends a warning naming the fix to warnings when the object store Ray will size (from
 * memory_bytes, or the --object-store-memory in ray_start) does not fit in /dev/shm under root.
 * Nothing when either is unknown. Returns 0, or -1 when out of memory. */
int shm_check(const char *root, unsigned long long memory_bytes, const struct strv *ray_start, struct strv *warnings);

#endif
