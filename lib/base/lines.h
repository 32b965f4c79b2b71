/* Walking a NUL-terminated text line by line, for the line-oriented files a pod is given
 * (/etc/hosts, /etc/resolv.conf). What a line says is its reader's. */
#ifndef RAYBOOT_LINES_H
#define RAYBOOT_LINES_H

#include <stdbool.h>

/* The next line at *cursor: *line is its first byte, *end the '\n' or NUL that ends it (not part
 * of it); *cursor moves past it. false when the text is used up. Start with *cursor at the text. */
bool lines_next(const char **cursor, const char **line, const char **end);

#endif
