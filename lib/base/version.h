/* The version line both programs print, with the libraries they were linked with. */
#ifndef RAYBOOT_VERSION_H
#define RAYBOOT_VERSION_H

#include <stdio.h>

/* RAYBOOT_VERSION comes from the VERSION file through the Makefile. */
#ifndef RAYBOOT_VERSION
#define RAYBOOT_VERSION "unknown"
#endif

void version_print(FILE *out, const char *program);

#endif
