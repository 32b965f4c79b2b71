/* host:port parsing for RAYBOOT_HEAD_ADDRESS and ports for the plugin flags. */
#ifndef RAYBOOT_ADDRESS_H
#define RAYBOOT_ADDRESS_H

#include <stddef.h>
#include <sys/socket.h>

#include "errbuf.h"

/* Room for a DNS name (253), or a bracketed IPv6 literal, plus the NUL. */
#define ADDRESS_HOST_MAX_BYTES 256

/* Decimal 1..65535 only. Returns 0, or -1 with a message saying what is wrong with text. */
int port_parse(const char *text, int *port, struct errbuf *err);

/* "host:port" or "[ipv6]:port"; a trailing dot on the host is dropped. host receives the name
 * (without brackets). The message does not repeat text: the caller names the variable. */
int address_parse(const char *text, char host[ADDRESS_HOST_MAX_BYTES], int *port, struct errbuf *err);

/* A numeric IPv4 or IPv6 address and a port as the socket calls take them; -1 with a message when
 * addr is not numeric (the prober and the rendezvous connect to addresses DNS gave, never names). */
int address_sockaddr(const char *addr, int port, struct sockaddr_storage *ss, socklen_t *len, struct errbuf *err);

#endif
