/* Reading the kubelet's downward API labels file. The kubelet writes each value with Go's
 * strconv.Quote; label values are letters, digits, '-', '_' and '.', which it never escapes, so
 * only the escapes a quoted string must have (\" \\) and the common \n \t are decoded and any
 * other is refused rather than guessed. Which labels matter is the callers' business. */
#include "podlabels.h"

#include <stdbool.h>
#include <string.h>

/* The bytes a label key may hold: an optional DNS-subdomain prefix and '/', then the name. */
static bool key_byte(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
           c == '.' || c == '/';
}

/* Scans the quoted value starting at q (on the opening quote) up to the end of its line. Copies
 * the unquoted bytes into out (when out is not NULL, at most cap - 1, NUL-terminated) and returns
 * their count, or -1 when the line is not one quoted string. *end is set past the line. */
static long scan_value(const char *q, char *out, size_t cap, const char **end)
{
    long n = 0;
    const char *c = q + 1;
    if (*q != '"')
        return -1;
    for (; *c && *c != '\n' && *c != '"'; c++) {
        char byte = *c;
        if ((unsigned char)byte < 0x20 || byte == 0x7f)
            return -1;
        if (byte == '\\') {
            c++;
            if (*c == '"' || *c == '\\')
                byte = *c;
            else if (*c == 'n')
                byte = '\n';
            else if (*c == 't')
                byte = '\t';
            else
                return -1;
        }
        if (out && (size_t)n + 1 < cap)
            out[n] = byte;
        n++;
    }
    if (*c != '"' || (c[1] && c[1] != '\n'))
        return -1;
    if (out && cap > 0)
        out[(size_t)n < cap ? (size_t)n : cap - 1] = '\0';
    *end = c[1] ? c + 2 : c + 1;
    return n;
}

/* The key of the line at line: its length, or 0 when the line does not start with key=. */
static size_t key_length(const char *line)
{
    size_t n = 0;
    while (key_byte(line[n]))
        n++;
    return (line[n] == '=' && n > 0 && n <= PODLABELS_KEY_MAX_BYTES) ? n : 0;
}

int podlabels_check(const char *text, const char *file, struct errbuf *err)
{
    size_t lineno = 1;
    for (const char *line = text; *line; lineno++) {
        size_t klen = key_length(line);
        const char *next;
        if (*line == '\n') { /* a blank line, or a newline after the last (hand-written files) */
            line++;
            continue;
        }
        if (klen == 0 || scan_value(line + klen + 1, NULL, 0, &next) < 0)
            return errbuf_set(err,
                              "%s line %zu: '%.80s' is not a label (key=\"value\", as the downward API writes "
                              "metadata.labels)",
                              file, lineno, line);
        line = next;
    }
    return 0;
}

int podlabels_get(const char *text, const char *key, char *value, size_t cap)
{
    size_t want = strlen(key);
    for (const char *line = text; *line;) {
        size_t klen = key_length(line);
        const char *next;
        long n;
        if (*line == '\n') {
            line++;
            continue;
        }
        if (klen == 0)
            return 0; /* unchecked text: stop at what is not a label */
        if (klen == want && memcmp(line, key, klen) == 0) {
            n = scan_value(line + klen + 1, value, cap, &next);
            if (n < 0)
                return 0;
            return (size_t)n < cap ? 1 : -1;
        }
        if (scan_value(line + klen + 1, NULL, 0, &next) < 0)
            return 0;
        line = next;
    }
    return 0;
}
