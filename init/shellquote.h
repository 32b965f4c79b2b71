/* One POSIX shell word per argv element: the Ray Jobs API takes its entrypoint as a shell string,
 * and what the user wrote as an argv must reach the job exactly, quotes, `$`, backticks and
 * newlines included. */
#ifndef RAYBOOT_SHELLQUOTE_H
#define RAYBOOT_SHELLQUOTE_H

#include <stddef.h>

/* Joins argv[0..argc) into one string of single-quoted words separated by spaces. Left bare, so
 * the string stays readable in logs: a word made only of [A-Za-z0-9_./-] (the first word), or of
 * those and [=:,+@%] (the others), that is not empty and, first, not a shell reserved word.
 * Returns a malloc'ed string, or NULL when out of memory or longer than SHELLQUOTE_MAX_BYTES. */
#define SHELLQUOTE_MAX_BYTES (256 * 1024)
char *shellquote_join(char *const *argv, int argc);

#endif
