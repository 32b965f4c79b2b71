/* File access for the planner: path prefixing and bounded whole-file reads of regular files.
 * Parsing what was read is left to each format's own module, and whether a file that cannot be
 * read counts as absent to each caller. */
#include "fsroot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What a path is when it is not a regular file, for the message. */
static const char *file_kind(mode_t mode)
{
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    return "not a plain file";
}

/* Opens path for reading without ever blocking: O_NONBLOCK makes open(2) of a FIFO with no
 * writer return at once (without it, start-up would hang there forever), and only a regular
 * file is then accepted, so no read blocks either. */
static int open_regular(const char *path, const char *abs_path, struct errbuf *err)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return errbuf_set(err, "%s: %s", abs_path, strerror(errno));
    if (fstat(fd, &st) < 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return errbuf_set(err, "%s: %s", abs_path, strerror(saved));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
        return errbuf_set(err, "%s: not a regular file (%s)", abs_path, file_kind(st.st_mode));
    }
    return fd;
}

int fsroot_path(const char *root, const char *abs_path, char *out, size_t cap)
{
    int n = snprintf(out, cap, "%s%s", root ? root : "", abs_path);
    return (n < 0 || (size_t)n >= cap) ? -1 : 0;
}

int fsroot_read(const char *root, const char *abs_path, size_t max_bytes, char **out, size_t *len, struct errbuf *err)
{
    char path[4096];
    char *buf;
    size_t used = 0;
    int fd;

    if (fsroot_path(root, abs_path, path, sizeof(path)) < 0) {
        errno = ENAMETOOLONG;
        return errbuf_set(err, "%s: path too long under RAYBOOT_ROOT", abs_path);
    }
    fd = open_regular(path, abs_path, err);
    if (fd < 0)
        return -1;
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
