/* Finding a secret's value in a word or a line and showing the marker instead; what is shown is
 * the callers' (init/plan_render.c, log.c, termlog.c). */
#include "redact.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A value is never longer than its item: the marker is what can make an item longer. */
#define REDACT_GROWTH_BYTES (sizeof(REDACT_MARKER) + 1)

static bool has_word(const char *name, size_t len, const char *word)
{
    size_t n = strlen(word);
    for (size_t i = 0; i + n <= len; i++)
        if (strncasecmp(name + i, word, n) == 0)
            return true;
    return false;
}

bool redact_secret_name(const char *name, size_t len)
{
    static const char *const secret[] = {"password",   "passwd", "token",   "secret",
                                         "credential", "apikey", "api_key", "api-key"};
    if (has_word(name, len, "path") || has_word(name, len, "file"))
        return false;
    for (size_t i = 0; i < sizeof(secret) / sizeof(secret[0]); i++)
        if (has_word(name, len, secret[i]))
            return true;
    return false;
}

/* A byte of a flag's or variable's name. */
static bool name_byte(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.';
}

static bool blank(char c)
{
    return c == '\0' || isspace((unsigned char)c);
}

/* Appends n bytes (cut at cap - 1). */
static void put(char *dst, size_t cap, size_t *o, const char *s, size_t n)
{
    if (*o + n > cap - 1)
        n = cap - 1 - *o;
    memcpy(dst + *o, s, n);
    *o += n;
}

/* At text[i] == '=': where the secret value after it ends (the next blank), or i when the name
 * before it is no secret's. */
static size_t secret_value_end(const char *text, size_t i)
{
    size_t b = i, e = i + 1;
    while (b > 0 && name_byte(text[b - 1]))
        b--;
    if (b == i || !redact_secret_name(text + b, i - b))
        return i;
    while (!blank(text[e]))
        e++;
    return e;
}

/* At text[i] == ':' of "://": where a URL password after the user ends (its '@'), and *start
 * where it starts; 0 when the URL holds none. */
static size_t url_password_end(const char *text, size_t i, size_t *start)
{
    size_t p = i + 3, colon = 0;
    for (; !blank(text[p]) && text[p] != '/' && text[p] != '?' && text[p] != '#'; p++) {
        if (text[p] == '@') {
            if (!colon)
                return 0;
            *start = colon + 1;
            return p;
        }
        if (text[p] == ':' && !colon)
            colon = p;
    }
    return 0;
}

size_t redact_text(char *dst, size_t cap, const char *text)
{
    size_t o = 0, i = 0, start, end;
    while (text[i] && o < cap - 1) {
        if (text[i] == '=' && (end = secret_value_end(text, i)) > i + 1) {
            put(dst, cap, &o, "=" REDACT_MARKER, sizeof(REDACT_MARKER));
            i = end;
        } else if (strncmp(text + i, "://", 3) == 0 && (end = url_password_end(text, i, &start)) > 0) {
            put(dst, cap, &o, text + i, start - i);
            put(dst, cap, &o, REDACT_MARKER, sizeof(REDACT_MARKER) - 1);
            i = end;
        } else {
            put(dst, cap, &o, text + i, 1);
            i++;
        }
    }
    dst[o] = '\0';
    return o;
}

/* A bare flag ("--redis-password") whose value is the next item. */
static bool bare_secret_flag(const char *item)
{
    return item[0] == '-' && !strchr(item, '=') && redact_secret_name(item, strlen(item));
}

int redact_strv(const struct strv *in, struct strv *out)
{
    for (size_t i = 0; i < in->len; i++) {
        size_t cap = strlen(in->items[i]) + REDACT_GROWTH_BYTES * (strlen(in->items[i]) / 2 + 1);
        char *shown;
        int rc;
        if (i > 0 && bare_secret_flag(in->items[i - 1])) {
            if (strv_push(out, REDACT_MARKER) < 0)
                return -1;
            continue;
        }
        shown = malloc(cap);
        if (!shown)
            return -1;
        redact_text(shown, cap, in->items[i]);
        rc = strv_push(out, shown);
        free(shown);
        if (rc < 0)
            return -1;
    }
    return 0;
}
