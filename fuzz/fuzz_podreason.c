/* libFuzzer target: sidecar/podreason.c on whatever an API server (or something posing as one)
 * could answer. The parse must never crash, and its description must stay a bounded line. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "podreason.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct pod_reason r;
    struct errbuf err;
    char line[512];
    if (podreason_parse((const char *)data, size, &r, &err) == 0) {
        podreason_describe(&r, line, sizeof(line));
        if (strchr(line, '\n'))
            __builtin_trap();
    }
    return 0;
}
