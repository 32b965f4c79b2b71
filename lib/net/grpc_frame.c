/* gRPC message framing: a flag byte, a 4-byte big-endian length, the message. Transport is
 * lib/net/grpc.c's; message contents are lib/ray/gcs.c's. */
#include "grpc_frame.h"

#include <ctype.h>
#include <strings.h>
#include <string.h>

#include "number.h"

long grpc_frame_encode(const uint8_t *msg, size_t len, uint8_t *out, size_t cap)
{
    if (len > UINT32_MAX || cap < GRPC_FRAME_HEADER_BYTES || len > cap - GRPC_FRAME_HEADER_BYTES)
        return -1;
    out[0] = 0; /* not compressed */
    out[1] = (uint8_t)(len >> 24);
    out[2] = (uint8_t)(len >> 16);
    out[3] = (uint8_t)(len >> 8);
    out[4] = (uint8_t)len;
    if (len)
        memcpy(out + GRPC_FRAME_HEADER_BYTES, msg, len);
    return (long)(len + GRPC_FRAME_HEADER_BYTES);
}

int grpc_frame_decode(const uint8_t *buf, size_t len, const uint8_t **msg, size_t *msg_len, struct errbuf *err)
{
    uint32_t declared;
    if (len < GRPC_FRAME_HEADER_BYTES)
        return errbuf_set(err, "reply of %zu bytes is shorter than a gRPC frame header", len);
    if (buf[0] != 0)
        return errbuf_set(err, "reply frame has flag %u (compressed or not gRPC)", buf[0]);
    declared = (uint32_t)buf[1] << 24 | (uint32_t)buf[2] << 16 | (uint32_t)buf[3] << 8 | buf[4];
    if (declared > len - GRPC_FRAME_HEADER_BYTES)
        return errbuf_set(err, "reply frame declares %u bytes but holds %zu", declared, len - GRPC_FRAME_HEADER_BYTES);
    if (declared < len - GRPC_FRAME_HEADER_BYTES)
        return errbuf_set(err, "reply has %zu bytes after its frame", len - GRPC_FRAME_HEADER_BYTES - declared);
    *msg = buf + GRPC_FRAME_HEADER_BYTES;
    *msg_len = declared;
    return 0;
}

/* Value of "name: value" when line starts with name (any case), trimmed; NULL otherwise. */
static const char *header_value(const char *line, size_t len, const char *name, size_t *value_len)
{
    size_t n = strlen(name);
    const char *v, *end = line + len;
    if (len <= n || strncasecmp(line, name, n) != 0 || line[n] != ':')
        return NULL;
    v = line + n + 1;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && isspace((unsigned char)end[-1]))
        end--;
    *value_len = (size_t)(end - v);
    return v;
}

void grpc_header_line(const char *line, size_t len, int *status, char *message, size_t message_cap)
{
    size_t vlen;
    const char *v = header_value(line, len, "grpc-status", &vlen);
    if (v) {
        long code;
        /* One to three digits (gRPC's codes are 0..16): anything else is -2. */
        *status = vlen <= 3 && number_parse(v, vlen, 0, 999, &code) == 0 ? (int)code : -2;
        return;
    }
    v = header_value(line, len, "grpc-message", &vlen);
    if (v && message_cap > 0) {
        if (vlen >= message_cap)
            vlen = message_cap - 1;
        memcpy(message, v, vlen);
        message[vlen] = '\0';
    }
}
