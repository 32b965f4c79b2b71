/* Ray's node label syntax, written from its regular expressions (LABEL_REGEX,
 * LABEL_PREFIX_REGEX) and parser (parse_node_labels_string) in Ray 2.60, byte for byte: what Ray
 * would abort on is refused here first. Which labels a pod gets is raylabels.c's. */
#include "labelsyntax.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static bool is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* LABEL_REGEX: ([a-zA-Z0-9]([a-zA-Z0-9_.-]{0,61}[a-zA-Z0-9])?), the whole of s[0..len). */
static bool is_name(const char *s, size_t len)
{
    if (len == 0 || len > LABELSYNTAX_NAME_MAX_BYTES || !is_alnum(s[0]) || !is_alnum(s[len - 1]))
        return false;
    for (size_t i = 1; i + 1 < len; i++) {
        if (!is_alnum(s[i]) && s[i] != '_' && s[i] != '.' && s[i] != '-')
            return false;
    }
    return true;
}

/* LABEL_PREFIX_REGEX: ^(NAME?(\.NAME?)*)$, segments that are empty or a NAME, joined by dots.
 * A NAME may itself hold dots, so the split is not unique ("a-.-b" is one NAME): reachable[i]
 * says a segment can start at i, and each start tries every end a NAME allows. */
static bool is_prefix(const char *s, size_t len)
{
    bool reachable[LABELSYNTAX_PREFIX_MAX_BYTES + 2] = {true};
    if (len > LABELSYNTAX_PREFIX_MAX_BYTES)
        return false;
    for (size_t i = 0; i <= len; i++) {
        if (!reachable[i])
            continue;
        for (size_t j = i; j <= len && j - i <= LABELSYNTAX_NAME_MAX_BYTES; j++) {
            if (j > i && !is_name(s + i, j - i))
                continue;
            if (j == len)
                return true;
            if (s[j] == '.')
                reachable[j + 1] = true;
        }
    }
    return false;
}

const char *labelsyntax_check_key(const char *key)
{
    const char *slash = strrchr(key, '/');
    const char *name = slash ? slash + 1 : key;
    if (slash && (size_t)(slash - key) > LABELSYNTAX_PREFIX_MAX_BYTES)
        return "its prefix (before the last /) is longer than 253 bytes";
    if (slash && !is_prefix(key, (size_t)(slash - key)))
        return "its prefix (before the last /) is not DNS labels separated by dots";
    if (!is_name(name, strlen(name)))
        return "its name must be 1 to 63 bytes of [a-zA-Z0-9_.-], beginning and ending with [a-zA-Z0-9]";
    return NULL;
}

const char *labelsyntax_check_value(const char *value)
{
    if (value[0] && !is_name(value, strlen(value)))
        return "a value must be empty or 1 to 63 bytes of [a-zA-Z0-9_.-], beginning and ending with [a-zA-Z0-9]";
    return NULL;
}

/* Python's str.strip() on ASCII: the blanks and the four separators \x1c-\x1f. */
static bool is_strip(char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f');
}

static void strip(const char **s, size_t *len)
{
    while (*len && is_strip(**s)) {
        (*s)++;
        (*len)--;
    }
    while (*len && is_strip((*s)[*len - 1]))
        (*len)--;
}

long labelsyntax_find(const struct strv *labels, const char *key, size_t key_len)
{
    for (size_t i = 0; i < labels->len; i++) {
        if (strncmp(labels->items[i], key, key_len) == 0 && labels->items[i][key_len] == '=')
            return (long)i;
    }
    return -1;
}

/* One "key=value" pair of len bytes at s: checked, then added or put in the place of its key. */
static int add_pair(const char *name, const char *s, size_t len, struct strv *out, struct errbuf *err)
{
    const char *eq = memchr(s, '=', len), *k = s, *v = eq ? eq + 1 : NULL, *why;
    size_t klen = eq ? (size_t)(eq - s) : len, vlen = eq ? len - klen - 1 : 0;
    char key[LABELSYNTAX_PREFIX_MAX_BYTES + LABELSYNTAX_NAME_MAX_BYTES + 2] = "",
                                                                         value[LABELSYNTAX_NAME_MAX_BYTES + 1] = "";
    long at;

    if (!eq || memchr(v, '=', vlen))
        return errbuf_set(err, "%s: '%.*s' is not one key=value pair (expected key=value,key2=value2)", name,
                          (int)(len > 80 ? 80 : len), s);
    strip(&k, &klen);
    strip(&v, &vlen);
    if (klen >= sizeof(key))
        return errbuf_set(err, "%s: the key '%.80s...' is too long (at most 253 + 1 + 63 bytes)", name, k);
    memcpy(key, k, klen);
    key[klen] = '\0';
    if ((why = labelsyntax_check_key(key)) != NULL)
        return errbuf_set(err, "%s: label key '%.80s' is not one Ray takes: %s", name, key, why);
    if (vlen >= sizeof(value))
        return errbuf_set(err, "%s: the value of label %.80s is longer than 63 bytes", name, key);
    memcpy(value, v, vlen);
    value[vlen] = '\0';
    if ((why = labelsyntax_check_value(value)) != NULL)
        return errbuf_set(err, "%s: the value '%s' of label %.80s is not one Ray takes: %s", name, value, key, why);
    at = labelsyntax_find(out, key, klen);
    if (at >= 0) {
        /* As in Ray's dict, a repeated key keeps its first place and takes the last value. */
        char pair[sizeof(key) + sizeof(value) + 1];
        snprintf(pair, sizeof(pair), "%s=%s", key, value);
        return strv_replace(out, (size_t)at, pair) < 0 ? errbuf_set(err, "out of memory") : 0;
    }
    if (out->len >= LABELSYNTAX_MAX_LABELS)
        return errbuf_set(err, "%s: more than %d labels", name, LABELSYNTAX_MAX_LABELS);
    return strv_pushf(out, "%s=%s", key, value) < 0 ? errbuf_set(err, "out of memory") : 0;
}

int labelsyntax_parse(const char *name, const char *text, struct strv *out, struct errbuf *err)
{
    size_t len = strlen(text);
    if (len > 1 && text[0] == '"' && text[len - 1] == '"') {
        text++;
        len -= 2;
    }
    if (len == 0)
        return 0;
    for (;;) {
        const char *comma = memchr(text, ',', len);
        size_t n = comma ? (size_t)(comma - text) : len;
        if (add_pair(name, text, n, out, err) < 0)
            return -1;
        if (!comma)
            return 0;
        text += n + 1;
        len -= n + 1;
    }
}
