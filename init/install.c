/* Copying the binaries: each one is written to a temporary name in DIR, fsynced, made
 * executable and renamed over the final name, then DIR is fsynced, so a container that starts
 * from DIR never runs a half-written binary. The sources are this executable (/proc/self/exe)
 * and rayboot-sidecar next to it. */
#include "install.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errbuf.h"
#include "exitcode.h"
#include "log.h"

#define INSTALL_MODE 0755

static int copy_fd(int in, int out)
{
    char buf[65536];
    for (;;) {
        ssize_t n = read(in, buf, sizeof(buf));
        if (n == 0)
            return 0;
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        for (ssize_t done = 0; done < n;) {
            ssize_t w = write(out, buf + done, (size_t)(n - done));
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0)
                return -1;
            done += w;
        }
    }
}

/* src -> dir/name, atomically. */
static int install_one(const char *src, const char *dir, const char *name, struct errbuf *err)
{
    char tmp[PATH_MAX], dst[PATH_MAX];
    int in, out, rc;
    if (snprintf(dst, sizeof(dst), "%s/%s", dir, name) >= (int)sizeof(dst) ||
        snprintf(tmp, sizeof(tmp), "%s/.%s.tmp.%d", dir, name, (int)getpid()) >= (int)sizeof(tmp))
        return errbuf_set(err, "install %s: path too long", dir);
    in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return errbuf_set(err, "install: cannot read %s: %s", src, strerror(errno));
    out = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, INSTALL_MODE);
    if (out < 0) {
        rc = errno;
        close(in);
        return errbuf_set(err, "install %s: cannot create %s: %s", dir, name, strerror(rc));
    }
    rc = copy_fd(in, out) < 0 || fchmod(out, INSTALL_MODE) < 0 || fsync(out) < 0 ? errno : 0;
    close(in);
    if (close(out) < 0 && !rc)
        rc = errno;
    if (!rc && rename(tmp, dst) < 0)
        rc = errno;
    if (rc) {
        unlink(tmp);
        return errbuf_set(err, "install %s: cannot write %s: %s", dir, name, strerror(rc));
    }
    return 0;
}

static int sync_dir(const char *dir, struct errbuf *err)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc = fd >= 0 && fsync(fd) == 0 ? 0 : -1;
    if (fd >= 0)
        close(fd);
    return rc ? errbuf_set(err, "install %s: cannot sync the directory: %s", dir, strerror(errno)) : 0;
}

int install_main(const char *dir)
{
    char self[PATH_MAX], sidecar[PATH_MAX + 32], here[PATH_MAX];
    struct errbuf err;
    struct stat st;
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

    if (!dir || !dir[0]) {
        log_error("rayboot install: name the directory (rayboot install DIR)");
        return EXIT_CONFIG;
    }
    if (stat(dir, &st) < 0) {
        log_error("rayboot install %s: %s", dir, strerror(errno));
        return EXIT_CANT_CREATE;
    }
    if (!S_ISDIR(st.st_mode)) {
        log_error("rayboot install %s: not a directory", dir);
        return EXIT_CANT_CREATE;
    }
    if (n < 0) {
        log_error("rayboot install: cannot find this executable: %s", strerror(errno));
        return EXIT_SOFTWARE;
    }
    self[n] = '\0';
    memcpy(here, self, (size_t)n + 1);
    snprintf(sidecar, sizeof(sidecar), "%s/rayboot-sidecar", dirname(here));
    if (install_one(self, dir, "rayboot", &err) < 0 ||
        (access(sidecar, R_OK) == 0 && install_one(sidecar, dir, "rayboot-sidecar", &err) < 0) ||
        sync_dir(dir, &err) < 0) {
        log_error("%s", err.msg);
        return EXIT_CANT_CREATE;
    }
    if (access(sidecar, R_OK) != 0)
        log_warn("no rayboot-sidecar next to %s: installed rayboot only", self);
    log_info("installed rayboot%s in %s", access(sidecar, R_OK) == 0 ? " and rayboot-sidecar" : "", dir);
    return EXIT_OK;
}
