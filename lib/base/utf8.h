/* Well-formed UTF-8 (RFC 3629), for text that must become JSON: JSON is UTF-8 and cJSON does not
 * check what it is given. */
#ifndef RAYBOOT_UTF8_H
#define RAYBOOT_UTF8_H

#include <stddef.h>

/* Length of the well-formed sequence at s (1 to 4), or 0 when the bytes there are not one. s must
 * be NUL-terminated: a truncated sequence stops at the NUL. */
size_t utf8_sequence_length(const unsigned char *s);

/* Offset of the first byte of s that does not start a well-formed sequence, or -1 if s is all
 * well-formed. */
long utf8_invalid_offset(const char *s);

#endif
