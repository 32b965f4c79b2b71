/* The version of the Ray that `ray start` will run, read before it runs and without Python: the
 * `Version:` line of the ray package's METADATA beside the `ray` executable. */
#ifndef RAYBOOT_RAYVERSION_H
#define RAYBOOT_RAYVERSION_H

#include <stdbool.h>
#include <stddef.h>

/* A version string ("2.60.0", "2.49.0rc1"); longer is not a version. */
#define RAYVERSION_MAX_BYTES 32
#define RAYVERSION_PATH_MAX_BYTES 512

struct rayversion {
    char version[RAYVERSION_MAX_BYTES];   /* "" when unknown */
    char from[RAYVERSION_PATH_MAX_BYTES]; /* the METADATA file read; "" when unknown */
    char why[RAYVERSION_PATH_MAX_BYTES];  /* when unknown: why, naming what was looked at */
};

/* Finds ray (argv[0] of `ray start`: a path, or a name searched in the environment's PATH as
 * proc_spawn will), follows its symlinks, and reads PREFIX/lib{,64}/python3.N/{site,dist}-packages/
 * ray-V.dist-info/METADATA where PREFIX is the directory above its bin/. Every file is read under
 * root (RAYBOOT_ROOT in tests). Never fails: an unknown version says why in out->why. */
void rayversion_read(const char *root, const char *const *envp, const char *ray, struct rayversion *out);

/* The ray executable execve will run for `ray` (a path, or a name on the environment's PATH), its
 * symlinks followed, into out (a path in the pod, without root). -1 when there is none. */
int rayversion_locate(const char *root, const char *const *envp, const char *ray, char *out, size_t cap);

#endif
