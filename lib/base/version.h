/* The version line both programs print, with the libraries they were linked with. */
#ifndef RAYBOOT_VERSION_H
#define RAYBOOT_VERSION_H

#include <stdio.h>

/* RAYBOOT_VERSION comes from the VERSION file through the Makefile. */
#ifndef RAYBOOT_VERSION
#define RAYBOOT_VERSION "unknown"
#endif

/* musl has no call that says its version: the Makefile passes the one it links (Debian's musl-dev). */
#ifndef RAYBOOT_MUSL_VERSION
#define RAYBOOT_MUSL_VERSION "unknown"
#endif

/* One line: PROGRAM, its version, the libraries both programs link and their versions, then MORE
 * (NULL for none): "name version" items of what only PROGRAM links; then a line naming the patch
 * its mbedTLS carries. */
void version_print(FILE *out, const char *program, const char *more);

#endif
