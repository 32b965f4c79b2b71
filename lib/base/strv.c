/* String vectors: ownership and growth only; what the strings mean is the caller's business. */
#include "strv.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void strv_init(struct strv *v)
{
    v->items = NULL;
    v->len = 0;
    v->cap = 0;
}

void strv_free(struct strv *v)
{
    for (size_t i = 0; i < v->len; i++)
        free(v->items[i]);
    free(v->items);
    strv_init(v);
}

/* gcc 12's -fanalyzer reports the string given here as leaked when it is stored into v->items (a
 * false positive: strv_free frees every item, and ASan's leak check agrees in every unit test). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak"
#endif
/* Takes ownership of s (freeing it on failure). */
static int strv_push_owned(struct strv *v, char *s)
{
    if (!s)
        return -1;
    if (v->len + 1 >= v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 8;
        char **items = realloc(v->items, cap * sizeof(*items));
        if (!items) {
            free(s);
            return -1;
        }
        v->items = items;
        v->cap = cap;
    }
    v->items[v->len++] = s;
    v->items[v->len] = NULL;
    return 0;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

int strv_push(struct strv *v, const char *s)
{
    return strv_push_owned(v, strdup(s));
}

int strv_pushn(struct strv *v, const char *s, size_t n)
{
    return strv_push_owned(v, strndup(s, n));
}

int strv_pushf(struct strv *v, const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    va_start(ap, fmt);
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    return strv_push_owned(v, n < 0 ? NULL : s);
}

int strv_replace(struct strv *v, size_t i, const char *s)
{
    char *copy = strdup(s);
    if (!copy)
        return -1;
    free(v->items[i]);
    v->items[i] = copy;
    return 0;
}

void strv_remove(struct strv *v, size_t i)
{
    free(v->items[i]);
    memmove(&v->items[i], &v->items[i + 1], (v->len - i) * sizeof(*v->items));
    v->len--;
}

int strv_split_words(struct strv *v, const char *text, size_t max_words)
{
    const char *p = text;
    for (;;) {
        size_t n = 0;
        while (isspace((unsigned char)*p))
            p++;
        if (!*p)
            return 0;
        while (p[n] && !isspace((unsigned char)p[n]))
            n++;
        if (v->len >= max_words) {
            errno = E2BIG;
            return -1;
        }
        if (strv_pushn(v, p, n) < 0)
            return -1;
        p += n;
    }
}
