/* Counting the Ray processes this container can see. They are visible only when the pod shares
 * its process namespace; otherwise the count is 0 and the sidecar does not wait for them. */
#include <ctype.h>
#include <dirent.h>
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

int raypids_count(void)
{
    DIR *proc = opendir("/proc");
    struct dirent *e;
    char comm[32];
    int count = 0;
    if (!proc)
        return 0;
    while ((e = readdir(proc)) != NULL) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        if (proc_comm(e->d_name, comm, sizeof(comm)) == 0 && is_ray_comm(comm))
            count++;
    }
    closedir(proc);
    return count;
}
