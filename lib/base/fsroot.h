/* Reading the files a pod sees, under RAYBOOT_ROOT when tests set it, always bounded. */
#ifndef RAYBOOT_FSROOT_H
#define RAYBOOT_FSROOT_H

#include <stddef.h>

#include "errbuf.h"

/* Writes root + abs_path into out. root may be NULL or "" (production). -1 if it does not fit. */
int fsroot_path(const char *root, const char *abs_path, char *out, size_t cap);

/* Reads the whole file at root + abs_path into a NUL-terminated malloc'd buffer, following
 * symlinks (ConfigMap keys are symlinks into ..data/). Fails with a message naming abs_path
 * when it is missing (errno ENOENT), unreadable, larger than max_bytes or holds a NUL byte, and
 * when it is not a regular file (a directory: EISDIR; a FIFO, device or socket: EINVAL), which
 * is never opened for long enough to block: a FIFO cannot hang start-up. */
int fsroot_read(const char *root, const char *abs_path, size_t max_bytes, char **out, size_t *len, struct errbuf *err);

#endif
