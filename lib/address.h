/* host:port parsing for RAYBOOT_HEAD_ADDRESS and ports for the plugin flags. */
#ifndef RAYBOOT_ADDRESS_H
#define RAYBOOT_ADDRESS_H

#include <stddef.h>

#include "errbuf.h"

/* Room for a DNS name (253), or a bracketed IPv6 literal, plus the NUL. */
#define ADDRESS_HOST_MAX_BYTES 256

/* Decimal 1..65535 only. Returns 0, or -1 with a message saying what is wrong with text. */
int port_parse(const char *text, int *port, struct errbuf *err);

/* "host:port" or "[ipv6]:port"; a trailing dot on the host is dropped. host receives the name
 * (without brackets). The message does not repeat text: the caller names the variable. */
int address_parse(const char *text, char host[ADDRESS_HOST_MAX_BYTES], int *port, struct errbuf *err);

#endif
