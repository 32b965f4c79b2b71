/* Bounded text into fixed buffers, where a cut is meant: gcc's -Wformat-truncation=2 cannot tell
 * a truncation we chose (or check) from one we did not, so such writes go through here. */
#ifndef RAYBOOT_TEXT_H
#define RAYBOOT_TEXT_H

#include <stddef.h>

/* snprintf, to the letter: at most cap - 1 bytes and a NUL; returns the length the whole text
 * would have had (so `n >= cap` is a cut), or a negative value on an encoding error. */
int text_format(char *dst, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The first len bytes of src (fewer if it ends sooner, or if cap is smaller) and a NUL; cap > 0.
 * Returns the bytes copied. */
size_t text_copy(char *dst, size_t cap, const char *src, size_t len);
/* src with each byte outside printable ASCII (a control byte: a newline, an ANSI escape; or
 * any non-ASCII byte) written as \xNN, into dst (cut to cap - 1 bytes, never inside an escape).
 * What the environment, files and network handed us reaches a log line or the termination message
 * this way only, so it can neither forge a line nor drive a terminal. Returns the bytes written. */
size_t text_printable(char *dst, size_t cap, const char *src);

#endif
