/* Is a dotted version (2.49.0, 2.49.0rc1, 3.0.0.dev0) at least MAJOR.MINOR? The one comparison of
 * Ray's versions: the planner's --labels gate reads Ray's package metadata, the waits read the
 * GCS's; both ask this. */
#ifndef RAYBOOT_DOTVERSION_H
#define RAYBOOT_DOTVERSION_H

/* 1 when version is major.minor or later, 0 when earlier, -1 when it does not start with
 * NUMBER.NUMBER (each at most 9 digits). */
int dotversion_at_least(const char *version, unsigned long major, unsigned long minor);

#endif
