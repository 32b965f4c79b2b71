/* The one way rayboot reads a decimal integer: the whole text, digits only, within a range. Where
 * a person may type blanks around it (a variable), the trimmed form. */
#ifndef RAYBOOT_NUMBER_H
#define RAYBOOT_NUMBER_H

#include <stddef.h>

/* text (len bytes, not necessarily NUL-terminated) is one or more digits '0'-'9' (no sign, no
 * blank, nothing else) whose value is in [min, max], 0 <= min <= max: returns 0 and the value,
 * else -1. A value past max is refused without overflowing, however many digits it has. */
int number_parse(const char *text, size_t len, long min, long max, long *out);

/* The same for a NUL-terminated text with blanks allowed before and after the digits. */
int number_parse_trimmed(const char *text, long min, long max, long *out);

/* A NUL-terminated count of seconds as a person writes it, blanks allowed around it: digits, and
 * optionally '.' and more digits ("30", "2.5", ".5", "3."), at most max_s seconds: returns 0 and
 * the value in milliseconds (digits past the third decimal are dropped), else -1. No sign, no
 * exponent, no "inf" or "nan": strtod would take each. */
int number_parse_millis(const char *text, long max_s, long *out_ms);

#endif
