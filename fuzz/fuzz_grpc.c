/* libFuzzer target: what lib/net/grpc.c and lib/net/grpc_frame.c make of a gRPC reply: the response
 * headers and trailers (one per line, as libcurl hands them to grpc_header_line), then, after an
 * empty line, the body, fed in two pieces through httpc_body_append (as lib/net/httpc.c's libcurl
 * callback does) and judged by grpc_reply_check exactly as grpc_call does. A message that is accepted must be the
 * frame's whole payload; grpc-message stays a bounded string; a frame re-encodes to the same bytes. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "grpc.h"
#include "grpc_frame.h"
#include "httpc.h"

/* As the GCS calls bound small replies (gcs.c's GCS_SMALL_REPLY_MAX_BYTES). */
#define FUZZ_REPLY_MAX_BYTES 4096

/* The HTTP status libcurl would report from a status line ("HTTP/2 200"), or -1 when line is
 * not one. */
static long status_of(const char *line, size_t len)
{
    long status = 0;
    size_t i = 5;
    if (len < 5 || memcmp(line, "HTTP/", 5) != 0)
        return -1;
    while (i < len && line[i] != ' ')
        i++;
    for (i++; i < len && line[i] >= '0' && line[i] <= '9' && status < 1000; i++)
        status = status * 10 + (line[i] - '0');
    return status;
}

static void check_round_trip(const uint8_t *msg, size_t len)
{
    uint8_t *frame = malloc(len + GRPC_FRAME_HEADER_BYTES);
    const uint8_t *back;
    size_t back_len;
    struct errbuf err;
    if (!frame)
        abort();
    if (grpc_frame_encode(msg, len, frame, len + GRPC_FRAME_HEADER_BYTES) != (long)(len + GRPC_FRAME_HEADER_BYTES) ||
        grpc_frame_encode(msg, len, frame, len + GRPC_FRAME_HEADER_BYTES - 1) != -1 ||
        grpc_frame_decode(frame, len + GRPC_FRAME_HEADER_BYTES, &back, &back_len, &err) != 0 || back_len != len ||
        (len && memcmp(back, msg, len) != 0))
        __builtin_trap();
    free(frame);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct grpc_reply reply;
    struct errbuf err;
    const uint8_t *p = data, *end = data + size, *body;
    long http_status = 200;
    size_t body_len, half;
    int first = 1;

    memset(&reply, 0, sizeof(reply));
    reply.grpc_status = -1;
    reply.body.max = FUZZ_REPLY_MAX_BYTES;
    /* Header lines up to an empty one; each is handed over with its line ending, like libcurl. */
    while (p < end) {
        const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
        char *line = malloc(len); /* exactly len bytes: libcurl's lines are not NUL-terminated */
        long status;
        if (!line)
            abort();
        memcpy(line, p, len);
        status = first ? status_of(line, len) : -1;
        first = 0;
        p += len;
        if (len == 1 || (len == 2 && line[0] == '\r')) {
            free(line);
            break;
        }
        if (status >= 0)
            http_status = status;
        grpc_header_line(line, len, &reply.grpc_status, reply.grpc_message, sizeof(reply.grpc_message));
        free(line);
        if (reply.grpc_status < -2 || reply.grpc_status > 999 ||
            !fuzz_terminated(reply.grpc_message, sizeof(reply.grpc_message)))
            __builtin_trap();
    }
    body = p;
    body_len = (size_t)(end - p);
    half = body_len / 2;
    if (httpc_body_append(&reply.body, body, half) == 0 &&
        httpc_body_append(&reply.body, body + half, body_len - half) == 0) {
        if (reply.body.len != body_len || (body_len && reply.body.len >= reply.body.cap) ||
            reply.body.cap > reply.body.max + 1 || (body_len && memcmp(reply.body.buf, body, body_len) != 0) ||
            (body_len && reply.body.buf[body_len] != '\0'))
            __builtin_trap();
        if (grpc_reply_check(http_status, &reply, &err) == 0) {
            if (reply.msg != (const uint8_t *)reply.body.buf + GRPC_FRAME_HEADER_BYTES ||
                reply.msg_len != reply.body.len - GRPC_FRAME_HEADER_BYTES || http_status != 200 ||
                reply.grpc_status != 0)
                __builtin_trap();
            check_round_trip(reply.msg, reply.msg_len);
        } else if (!fuzz_terminated(err.msg, sizeof(err.msg))) {
            __builtin_trap();
        }
    } else if (body_len <= FUZZ_REPLY_MAX_BYTES) {
        __builtin_trap(); /* refused while within the bound */
    }
    grpc_reply_free(&reply);
    return 0;
}
