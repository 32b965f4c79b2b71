/* One logging API for both programs: whole lines on stderr, text or JSON. */
#ifndef RAYBOOT_LOG_H
#define RAYBOOT_LOG_H

#include <stdbool.h>

enum log_format { LOG_FORMAT_TEXT, LOG_FORMAT_JSON };

/* Sets the program name shown on each line (not copied: pass a string literal). */
void log_init(const char *program, enum log_format format);
/* Parses "text" or "json"; returns -1 for anything else. */
int log_format_parse(const char *name, enum log_format *out);
void log_set_debug(bool enabled);

/* Each call writes exactly one line with one write(2) and leaves errno as it found it. */
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
