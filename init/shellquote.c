/* Quoting for a POSIX shell: inside single quotes every byte is literal except the single quote,
 * which is written as '\'' (close, escaped quote, reopen). A word stays bare only when the shell
 * could not read it as anything but itself: safe characters, and for the first word (the one the
 * shell reads as a command, an assignment or a keyword) fewer of them and no reserved word. */
#include "shellquote.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Bare in argument position: none of these is special to sh, dash or bash there. */
#define SAFE_PUNCTUATION "_-./=:,+@%"
/* Bare as the first word: no '=' (NAME=value would be an assignment and the next word the
 * command), nothing that is not plainly part of a name or a path. */
#define SAFE_PUNCTUATION_FIRST "_-./"

/* Words sh, dash or bash read as syntax in command position (POSIX 2.4, and bash's own). */
static const char *const reserved_words[] = {
    "if",    "then",  "else", "elif", "fi",       "do",     "done", "case",   "esac",
    "while", "until", "for",  "in",   "function", "select", "time", "coproc",
};

static bool is_reserved(const char *word)
{
    for (size_t i = 0; i < sizeof(reserved_words) / sizeof(reserved_words[0]); i++)
        if (strcmp(word, reserved_words[i]) == 0)
            return true;
    return false;
}

static bool is_safe(const char *word, bool first)
{
    const char *punctuation = first ? SAFE_PUNCTUATION_FIRST : SAFE_PUNCTUATION;
    if (!*word)
        return false; /* the empty word must be '' */
    for (const char *c = word; *c; c++) {
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              strchr(punctuation, *c)))
            return false;
    }
    return !(first && is_reserved(word));
}

/* Bytes the quoted word takes: at most 4 per byte plus the quotes. */
static size_t quoted_len(const char *word, bool first)
{
    size_t n = 2;
    if (is_safe(word, first))
        return strlen(word);
    for (const char *c = word; *c; c++)
        n += *c == '\'' ? 4 : 1;
    return n;
}

static char *put_word(char *out, const char *word, bool first)
{
    bool quote = !is_safe(word, first);
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
        total += quoted_len(argv[i], i == 0) + 1;
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
        out = put_word(out, argv[i], i == 0);
    }
    *out = '\0';
    return buf;
}
