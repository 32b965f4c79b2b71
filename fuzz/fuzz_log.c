/* libFuzzer target: lib/base/log.c's line formatting, which quotes whatever the environment, files and
 * network handed rayboot. Input: the first byte picks text or JSON, the rest is the message. A
 * line must be exactly one line (its only newline the last byte), printable ASCII otherwise, and
 * in JSON a document that parses with a "msg" string. */
#include <string.h>

#include <cjson/cJSON.h>

#include "fuzz.h"
#include "log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char line[LOG_LINE_MAX_BYTES], *copy, *msg;
    enum log_format format;
    size_t len;

    if (size == 0)
        return 0;
    format = (data[0] & 1) ? LOG_FORMAT_JSON : LOG_FORMAT_TEXT;
    msg = fuzz_strndup(data + 1, size - 1);
    len = log_format_line(line, format, "rayboot", "warning", msg);
    if (len == 0 || len > sizeof(line) || line[len - 1] != '\n')
        __builtin_trap();
    for (size_t i = 0; i + 1 < len; i++) {
        if (line[i] < 0x20 || line[i] >= 0x7f)
            __builtin_trap();
    }
    if (format == LOG_FORMAT_JSON) {
        cJSON *o;
        copy = fuzz_strndup((const uint8_t *)line, len);
        o = cJSON_Parse(copy);
        if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(o, "msg")))
            __builtin_trap();
        cJSON_Delete(o);
        free(copy);
    }
    free(msg);
    return 0;
}
