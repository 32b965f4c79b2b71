/* File access for the planner: path prefixing and bounded whole-file reads. Parsing what was
 * read is left to each format's own module. */
#include "fsroot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int fsroot_path(const char *root, const char *abs_path, char *out, size_t cap)
{
    int n = snprintf(out, cap, "%s%s", root ? root : "", abs_path);
    return (n < 0 || (size_t)n >= cap) ? -1 : 0;
}

int fsroot_read(const char *root, const char *abs_path, size_t max_bytes, char **out, size_t *len,
                struct errbuf *err)
{
    char path[4096];
    char *buf;
    size_t used = 0;
    int fd;

    if (fsroot_path(root, abs_path, path, sizeof(path)) < 0) {
        errno = ENAMETOOLONG;
        return errbuf_set(err, "%s: path too long under RAYBOOT_ROOT", abs_path);
    }
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errbuf_set(err, "%s: %s", abs_path, strerror(errno));
    /* One byte beyond the bound tells "exactly at the limit" from "over it". */
    buf = malloc(max_bytes + 2);
    if (!buf) {
        close(fd);
        return errbuf_set(err, "%s: out of memory", abs_path);
    }
    for (;;) {
        ssize_t n = read(fd, buf + used, max_bytes + 1 - used);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int saved = errno;
            free(buf);
            close(fd);
            errno = saved;
            return errbuf_set(err, "%s: %s", abs_path, strerror(saved));
        }
        if (n == 0)
            break;
        used += (size_t)n;
        if (used > max_bytes) {
            free(buf);
            close(fd);
            errno = EFBIG;
            return errbuf_set(err, "%s: larger than %zu bytes", abs_path, max_bytes);
        }
    }
    close(fd);
    if (memchr(buf, '\0', used)) {
        free(buf);
        errno = EILSEQ;
        return errbuf_set(err, "%s: holds a NUL byte (not a text file)", abs_path);
    }
    buf[used] = '\0';
    *out = buf;
    if (len)
        *len = used;
    return 0;
}
