/* libFuzzer target: init/jobsapi.c on whatever a dashboard (or something posing as one) could
 * answer: job details, submit replies and logs; and runtime_env text, which is checked the same
 * way. Never a crash; ids stay URL-safe, messages one line, logs NUL-terminated. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jobsapi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct jobsapi_job job;
    struct errbuf err;
    char id[JOBSAPI_ID_MAX_BYTES], *logs;
    size_t len;
    const char *text = (const char *)data;
    if (jobsapi_parse_job(text, size, &job, &err) == 0 && strchr(job.message, '\n'))
        __builtin_trap();
    if (jobsapi_parse_submitted(text, size, id, &err) == 0 && strpbrk(id, "/?# "))
        __builtin_trap();
    if (jobsapi_parse_logs(text, size, &logs, &len, &err) == 0) {
        if (logs[len] != '\0')
            __builtin_trap();
        free(logs);
    }
    /* RAYBOOT_RUNTIME_ENV / RAYBOOT_RUNTIME_ENV_FILE are checked this way before a submit. */
    (void)jobsapi_check_object(text, size, &err);
    return 0;
}
