/* rayboot --help. */
#ifndef RAYBOOT_INIT_USAGE_H
#define RAYBOOT_INIT_USAGE_H

#include <stdio.h>

void usage_print(FILE *out);

#endif
