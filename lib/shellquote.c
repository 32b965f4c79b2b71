/* Quoting for a POSIX shell: inside single quotes every byte is literal except the single quote,
 * which is written as '\'' (close, escaped quote, reopen). */
#include "shellquote.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static bool is_safe(const char *word)
{
    if (!*word)
        return false; /* the empty word must be '' */
    for (const char *c = word; *c; c++) {
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              strchr("_-./=:,+@%", *c)))
            return false;
    }
    return true;
}

/* Bytes the quoted word takes: at most 4 per byte plus the quotes. */
static size_t quoted_len(const char *word)
{
    size_t n = 2;
    if (is_safe(word))
        return strlen(word);
    for (const char *c = word; *c; c++)
        n += *c == '\'' ? 4 : 1;
    return n;
}

static char *put_word(char *out, const char *word)
{
    bool quote = !is_safe(word);
    if (quote)
        *out++ = '\'';
    for (const char *c = word; *c; c++) {
        if (*c == '\'') {
            for (const char *esc = "'\\''"; *esc; esc++)
                *out++ = *esc;
        } else {
            *out++ = *c;
        }
    }
    if (quote)
        *out++ = '\'';
    return out;
}

char *shellquote_join(char *const *argv, int argc)
{
    size_t total = 1;
    char *buf, *out;
    for (int i = 0; i < argc; i++) {
        total += quoted_len(argv[i]) + 1;
        if (total > SHELLQUOTE_MAX_BYTES)
            return NULL;
    }
    buf = malloc(total);
    if (!buf)
        return NULL;
    out = buf;
    for (int i = 0; i < argc; i++) {
        if (i > 0)
            *out++ = ' ';
        out = put_word(out, argv[i]);
    }
    *out = '\0';
    return buf;
}
