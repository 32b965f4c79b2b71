/* A growable, NULL-terminated vector of owned strings: argv lists, warnings, host lists. */
#ifndef RAYBOOT_STRV_H
#define RAYBOOT_STRV_H

#include <stddef.h>

struct strv {
    char **items; /* NULL-terminated while cap > 0; each item owned */
    size_t len;
    size_t cap;
};

void strv_init(struct strv *v);
void strv_free(struct strv *v);
/* Copies s (or its first n bytes) to the end. Return 0, or -1 when out of memory. */
int strv_push(struct strv *v, const char *s);
int strv_pushn(struct strv *v, const char *s, size_t n);
int strv_pushf(struct strv *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Replaces item i with a copy of s. */
int strv_replace(struct strv *v, size_t i, const char *s);
void strv_remove(struct strv *v, size_t i);
/* Appends the whitespace-separated words of text (no quoting: a value with spaces needs another
 * syntax). Returns 0; -1 when there would be more than max_words (errno E2BIG) or out of memory. */
int strv_split_words(struct strv *v, const char *text, size_t max_words);

#endif
