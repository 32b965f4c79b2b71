/* One logging API for both programs: whole lines on stderr, text or JSON. */
#ifndef RAYBOOT_LOG_H
#define RAYBOOT_LOG_H

#include <stdbool.h>
#include <stddef.h>

enum log_format { LOG_FORMAT_TEXT, LOG_FORMAT_JSON };

/* Long enough for any message we write, including a full host:port and a reason; longer
 * messages are cut, never split across lines. */
#define LOG_LINE_MAX_BYTES 4096

/* Sets the program name shown on each line (not copied: pass a string literal). */
void log_init(const char *program, enum log_format format);
/* Parses "text" or "json"; returns -1 for anything else. */
int log_format_parse(const char *name, enum log_format *out);
void log_set_debug(bool enabled);

/* message as a log line or the termination message shows it, into dst (cut to cap - 1 bytes):
 * secrets' values replaced (redact_text: a --redis-password=, a URL's password) and each byte
 * outside printable ASCII as \xNN (text_printable). Returns the bytes written. */
size_t log_shown(char *dst, size_t cap, const char *message);

/* The line the calls below write for message (already formatted), without writing it: secrets
 * redacted and bytes outside printable ASCII as \xNN (log_shown), JSON is escaped, the newline is included and the line
 * is NOT NUL-terminated. Returns its length. Pure but for the clock, so it can be fuzzed. */
size_t log_format_line(char line[LOG_LINE_MAX_BYTES], enum log_format format, const char *program, const char *level,
                       const char *message);

/* Each call writes exactly one line with one write(2) and leaves errno as it found it. */
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
