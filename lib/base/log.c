/* Logging: formats one event into a bounded line and writes it to stderr in one write(2), so
 * lines from several processes never interleave. It knows nothing about what is logged. */
#include "log.h"
#include "redact.h"
#include "text.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *log_program = "rayboot";
static enum log_format log_fmt = LOG_FORMAT_TEXT;
static bool log_debug_enabled;

void log_init(const char *program, enum log_format format)
{
    log_program = program;
    log_fmt = format;
}

int log_format_parse(const char *name, enum log_format *out)
{
    if (strcmp(name, "text") == 0)
        *out = LOG_FORMAT_TEXT;
    else if (strcmp(name, "json") == 0)
        *out = LOG_FORMAT_JSON;
    else
        return -1;
    return 0;
}

void log_set_debug(bool enabled)
{
    log_debug_enabled = enabled;
}

/* Appends src to dst[*len..cap) as the inside of a JSON string; stops before overflowing. */
static void json_escape_into(char *dst, size_t *len, size_t cap, const char *src)
{
    for (const unsigned char *p = (const unsigned char *)src; *p; p++) {
        char esc[8];
        size_t n;
        if (*p == '"' || *p == '\\') {
            esc[0] = '\\';
            esc[1] = (char)*p;
            n = 2;
        } else if (*p == '\n') {
            esc[0] = '\\';
            esc[1] = 'n';
            n = 2;
        } else if (*p < 0x20) {
            n = (size_t)snprintf(esc, sizeof(esc), "\\u%04x", *p);
        } else {
            esc[0] = (char)*p;
            n = 1;
        }
        if (*len + n >= cap)
            return;
        memcpy(dst + *len, esc, n);
        *len += n;
    }
}

size_t log_shown(char *dst, size_t cap, const char *message)
{
    char redacted[LOG_LINE_MAX_BYTES];
    redact_text(redacted, sizeof(redacted), message);
    return text_printable(dst, cap, redacted);
}

size_t log_format_line(char line[LOG_LINE_MAX_BYTES], enum log_format format, const char *program, const char *level,
                       const char *message)
{
    char msg[LOG_LINE_MAX_BYTES];
    size_t len = 0;
    int n;

    /* Messages quote what the environment, files and network handed us: a log line never carries
     * their secrets nor their raw control or non-ASCII bytes. */
    log_shown(msg, sizeof(msg), message);
    if (format == LOG_FORMAT_JSON) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        n = snprintf(line, LOG_LINE_MAX_BYTES, "{\"ts\":%lld.%03ld,\"level\":\"%s\",\"program\":\"%s\",\"msg\":\"",
                     (long long)ts.tv_sec, ts.tv_nsec / 1000000, level, program);
        len = (n > 0 && (size_t)n < LOG_LINE_MAX_BYTES) ? (size_t)n : 0;
        /* Room is kept for the closing quote, brace and newline. */
        json_escape_into(line, &len, LOG_LINE_MAX_BYTES - 3, msg);
        line[len++] = '"';
        line[len++] = '}';
        line[len++] = '\n';
    } else {
        n = text_format(line, LOG_LINE_MAX_BYTES - 1, "%s: %s: %s", program, level, msg);
        len = n < 0 ? 0 : ((size_t)n < LOG_LINE_MAX_BYTES - 1 ? (size_t)n : LOG_LINE_MAX_BYTES - 2);
        line[len++] = '\n';
    }
    return len;
}

/* The attribute lets clang check fmt as it checks the callers' (-Wformat-nonliteral). */
static void log_write(const char *level, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static void log_write(const char *level, const char *fmt, va_list ap)
{
    char msg[LOG_LINE_MAX_BYTES];
    char line[LOG_LINE_MAX_BYTES];
    size_t len;

    vsnprintf(msg, sizeof(msg), fmt, ap);
    len = log_format_line(line, log_fmt, log_program, level, msg);
    /* A short write to stderr has nowhere better to be reported; the line is lost. */
    ssize_t written = write(STDERR_FILENO, line, len);
    (void)written;
}

#define LOG_DEFINE(name, level, gate)                                                                                  \
    void name(const char *fmt, ...)                                                                                    \
    {                                                                                                                  \
        int saved_errno = errno;                                                                                       \
        va_list ap;                                                                                                    \
        if (!(gate)) {                                                                                                 \
            errno = saved_errno;                                                                                       \
            return;                                                                                                    \
        }                                                                                                              \
        va_start(ap, fmt);                                                                                             \
        log_write(level, fmt, ap);                                                                                     \
        va_end(ap);                                                                                                    \
        errno = saved_errno;                                                                                           \
    }

LOG_DEFINE(log_debug, "debug", log_debug_enabled)
LOG_DEFINE(log_info, "info", true)
LOG_DEFINE(log_warn, "warning", true)
LOG_DEFINE(log_error, "error", true)
