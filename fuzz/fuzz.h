/* Helpers shared by the libFuzzer targets in fuzz/: turning the fuzzer's bytes into the C strings
 * and argument lists the parsers take. Header-only, so each target stays one file. */
#ifndef RAYBOOT_FUZZ_H
#define RAYBOOT_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A NUL-terminated copy of the input (an embedded NUL ends the string early, as it would in a
 * file rayboot refuses or an env string the kernel cuts). Aborts when out of memory. */
static inline char *fuzz_strndup(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        abort();
    if (size)
        memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* Splits text in place at each sep into at most max pieces (the last keeps the rest); returns
 * how many. */
static inline size_t fuzz_split(char *text, char sep, char **pieces, size_t max)
{
    size_t n = 0;
    if (max == 0)
        return 0;
    pieces[n++] = text;
    for (char *p = text; *p && n < max; p++) {
        if (*p == sep) {
            *p = '\0';
            pieces[n++] = p + 1;
        }
    }
    return n;
}

/* Whether a buffer of cap bytes holds a NUL-terminated string. */
static inline int fuzz_terminated(const char *msg, size_t cap)
{
    return memchr(msg, '\0', cap) != NULL;
}

/* Whether a buffer of cap bytes holds a NUL-terminated string with no line break: what a text
 * bound for one log line, a termination message or a DrainNode reason must be. */
static inline int fuzz_one_line(const char *msg, size_t cap)
{
    const char *nul = memchr(msg, '\0', cap);
    return nul && !memchr(msg, '\n', (size_t)(nul - msg));
}

#endif
