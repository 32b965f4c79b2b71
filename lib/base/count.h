/* Decimal counts and indexes as Kubernetes controllers write them (Go's strconv.Itoa): digits
 * only, for the platforms' variables and labels (LWS_GROUP_SIZE, job-index, ...). */
#ifndef RAYBOOT_COUNT_H
#define RAYBOOT_COUNT_H

#include <stddef.h>

/* A count or index beyond this is garbage, not a cluster (the platforms' int32 fields allow more,
 * but no Ray cluster has a million nodes). */
#define COUNT_MAX 1000000L

/* text (len bytes, not necessarily NUL-terminated) is 1 to 7 decimal digits with a value up to
 * COUNT_MAX: returns 0 and the value, else -1. No sign, space or other byte is accepted. */
int count_parse(const char *text, size_t len, long *out);

#endif
