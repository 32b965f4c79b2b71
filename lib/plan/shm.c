/* /dev/shm against the object store Ray will size: measured with statvfs, as Ray measures it,
 * and the store computed by Ray's own rule. Only a warning: Ray still runs, on disk. */
#include "shm.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/statvfs.h>

#include "fsroot.h"
#include "number.h"
#include "raystart.h"

#define SHM_PATH "/dev/shm"
#define MIB (1024ULL * 1024ULL)

unsigned long long shm_object_store_bytes(unsigned long long memory_bytes, unsigned long long given,
                                          unsigned long long shm_free)
{
    unsigned long long store, cap = SHM_STORE_MAX_BYTES, shm_cap;
    if (given > 0)
        return given;
    if (memory_bytes == 0)
        return 0;
    /* Divided first: a memory limit near 2^64 must not wrap. */
    store = memory_bytes / 100 * SHM_STORE_PERCENT_OF_MEMORY;
    shm_cap = shm_free / 100 * SHM_CAP_PERCENT_OF_SHM;
    if (shm_cap < SHM_CAP_FLOOR_BYTES)
        shm_cap = SHM_CAP_FLOOR_BYTES;
    if (cap > shm_cap)
        cap = shm_cap;
    return store < cap ? store : cap;
}

int shm_free_bytes(const char *root, unsigned long long *bytes)
{
    char path[4096];
    struct statvfs st;
    if (fsroot_path(root, SHM_PATH, path, sizeof(path)) < 0) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (statvfs(path, &st) < 0)
        return -1;
    *bytes = (unsigned long long)st.f_bavail * st.f_bsize;
    return 0;
}

/* --object-store-memory=BYTES from the argv, 0 when absent or not a number (Ray refuses it then). */
static unsigned long long given_store(const struct strv *ray_start)
{
    const char *v = raystart_flag_value(ray_start, "--object-store-memory");
    long n;
    if (!v || number_parse(v, strlen(v), 0, LONG_MAX, &n) < 0)
        return 0;
    return (unsigned long long)n;
}

int shm_check(const char *root, unsigned long long memory_bytes, const struct strv *ray_start, struct strv *warnings)
{
    unsigned long long free_bytes, given = given_store(ray_start), store;
    if (shm_free_bytes(root, &free_bytes) < 0)
        return 0; /* no /dev/shm: Ray finds none either and says so */
    store = shm_object_store_bytes(memory_bytes, given, free_bytes);
    if (store == 0 || store <= free_bytes)
        return 0;
    /* Above 10 GB ray start refuses a store that does not fit (unless
     * RAY_OBJECT_STORE_ALLOW_SLOW_STORAGE); below, it falls back to disk. */
    return strv_pushf(warnings,
                      "/dev/shm has %llu MiB free, less than the %llu MiB object store Ray will make (%s): %s. "
                      "Mount a memory-backed emptyDir at /dev/shm (emptyDir: {medium: Memory, sizeLimit: %lluMi} "
                      "or more) and give the container a memory limit that holds it, as the shipped manifests do",
                      free_bytes / MIB, store / MIB, given ? "--object-store-memory" : "30% of the memory limit",
                      store > SHM_CAP_FLOOR_BYTES ? "ray start will refuse it" : "Ray will put it on disk, much slower",
                      (store + MIB - 1) / MIB) < 0
               ? -1
               : 0;
}
