/* Counting the Ray processes this container can see. They are visible only when the pod shares
 * its process namespace; otherwise the count is 0 and the sidecar does not wait for them. */
#include <stdbool.h>
#include <string.h>

#include "proc.h"
#include "raypids.h"

/* comm is at most 15 characters; Ray's daemons and its worker processes ("ray::IDLE", "ray::f")
 * are recognisable by it. `ray start --block` itself is Python and is left to its container. */
static bool is_ray_comm(const char *comm)
{
    return strcmp(comm, "raylet") == 0 || strcmp(comm, "gcs_server") == 0 || strncmp(comm, "ray::", 5) == 0;
}

static bool count_ray(const char *pid_name, pid_t pid, void *ctx)
{
    char comm[32];
    (void)pid;
    if (proc_comm(pid_name, comm, sizeof(comm)) == 0 && is_ray_comm(comm))
        (*(int *)ctx)++;
    return false;
}

int raypids_count(void)
{
    int count = 0;
    proc_each(count_ray, &count);
    return count;
}
