/* Lower-case hex, the one spelling the keyed messages use (the rendezvous' tags, the drain
 * port's proof): one encoder and one strict decoder, so both sides read a tag the same way. */
#ifndef RAYBOOT_HEX_H
#define RAYBOOT_HEX_H

#include <stddef.h>
#include <stdint.h>

/* Writes 2n hex digits of d at out, and no terminator. */
void hex_encode(const uint8_t *d, size_t n, char *out);
/* 0 when the 2n characters at s are lower-case hex (decoded into d), -1 otherwise. */
int hex_decode(const char *s, size_t n, uint8_t *d);
/* A lower-case hex digit's value, or -1 for any other character. */
int hex_digit(char c);

#endif
