/* The two steps that keep secrets out of /proc and out of cores: hide a process, and shed what a
 * forked helper inherited. Which processes take them is their callers' (both mains, the prober,
 * the rendezvous, the watch, the API reader); closing descriptors and wiping the environment is
 * scrub.c's. */
#include "secrets.h"

#include <errno.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include "scrub.h"

int secrets_hide_process(struct errbuf *err)
{
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
        return errbuf_set(err, "cannot make this process non-dumpable (prctl PR_SET_DUMPABLE): %s", strerror(errno));
    return 0;
}

int secrets_shed(struct errbuf *err)
{
    const struct rlimit no_core = {0, 0};
    int rc = secrets_hide_process(err);
    scrub_environment();
    if (rc == 0 && setrlimit(RLIMIT_CORE, &no_core) < 0)
        rc = errbuf_set(err, "cannot turn core dumps off (setrlimit RLIMIT_CORE): %s", strerror(errno));
    return rc;
}
