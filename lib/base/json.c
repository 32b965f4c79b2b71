/* Small cJSON helpers: parsing replies exactly, and the one rule for text in JSON output (the
 * plan, the Jobs API request, the sidecar's /drain answer). */
#include "json.h"

#include <stdlib.h>
#include <string.h>

#include "utf8.h"

cJSON *json_parse_exact(const char *text, size_t len)
{
    const char *end = NULL;
    cJSON *value = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    while (value && end < text + len && (*end == ' ' || *end == '\n' || *end == '\r' || *end == '\t'))
        end++;
    if (value && end != text + len) {
        cJSON_Delete(value);
        value = NULL;
    }
    return value;
}

void json_copy_printable(char *out, size_t cap, const cJSON *item)
{
    size_t n = 0;
    const char *s = cJSON_IsString(item) ? item->valuestring : NULL;
    if (cap == 0)
        return;
    for (; s && *s && n + 1 < cap; s++)
        out[n++] = (char)((*s >= 0x20 && *s < 0x7f) ? *s : ' ');
    out[n] = '\0';
}

cJSON *json_text(const char *s)
{
    static const char replacement[] = "\xef\xbf\xbd";
    size_t len = strlen(s), o = 0;
    char *clean = malloc(len * 3 + 1);
    cJSON *item;
    if (!clean)
        return NULL;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t n = utf8_sequence_length(p);
        if (n == 0) {
            memcpy(clean + o, replacement, 3);
            o += 3;
            p++;
            continue;
        }
        memcpy(clean + o, p, n);
        o += n;
        p += n;
    }
    clean[o] = '\0';
    item = cJSON_CreateString(clean);
    free(clean);
    return item;
}

int json_add_text(cJSON *obj, const char *key, const char *s)
{
    cJSON *item = json_text(s);
    if (!item || !cJSON_AddItemToObject(obj, key, item)) {
        cJSON_Delete(item);
        return -1;
    }
    return 0;
}
