/* gRPC's length-prefixed message framing (one message per unary call). */
#ifndef RAYBOOT_GRPC_FRAME_H
#define RAYBOOT_GRPC_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "errbuf.h"

#define GRPC_FRAME_HEADER_BYTES 5

/* Writes the 5-byte header and msg into out; returns the frame's size, or -1 if cap is short. */
long grpc_frame_encode(const uint8_t *msg, size_t len, uint8_t *out, size_t cap);

/* buf must hold exactly one uncompressed frame; msg points into buf. -1 with the reason
 * (short, compressed, declared length beyond the data, trailing bytes). */
int grpc_frame_decode(const uint8_t *buf, size_t len, const uint8_t **msg, size_t *msg_len, struct errbuf *err);

/* One response header or trailer line as libcurl hands it over ("grpc-status: 14\r\n"). Sets
 * *status for grpc-status (or -2 when its value is not a number) and copies grpc-message;
 * other lines are ignored. */
void grpc_header_line(const char *line, size_t len, int *status, char *message, size_t message_cap);

#endif
