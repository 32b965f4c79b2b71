/* Small cJSON helpers shared by the sidecar's Pod reading and the submitter's Jobs API. */
#include "json.h"

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
