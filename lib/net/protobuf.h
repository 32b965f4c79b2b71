/* Just enough protobuf wire format to speak to Ray's GCS without generated code: a bounded
 * reader over a buffer and a writer into a fixed buffer. */
#ifndef RAYBOOT_PROTOBUF_H
#define RAYBOOT_PROTOBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum pb_wire { PB_VARINT = 0, PB_FIXED64 = 1, PB_BYTES = 2, PB_FIXED32 = 5 };

struct pb_reader {
    const uint8_t *p;
    const uint8_t *end;
};

struct pb_field {
    uint32_t number;
    enum pb_wire wire;
    uint64_t varint;     /* PB_VARINT, PB_FIXED32, PB_FIXED64 */
    const uint8_t *data; /* PB_BYTES: points into the reader's buffer */
    size_t len;
};

void pb_reader_init(struct pb_reader *r, const uint8_t *buf, size_t len);
/* What pb_next found. */
enum pb_next {
    PB_FIELD = 1,      /* the next field, in *f */
    PB_END = 0,        /* the end of the message */
    PB_MALFORMED = -1, /* bytes that are not valid protobuf */
};
enum pb_next pb_next(struct pb_reader *r, struct pb_field *f);

struct pb_writer {
    uint8_t *buf;
    size_t len;
    size_t cap;
    bool overflow; /* set instead of writing past cap; check once at the end */
};

void pb_writer_init(struct pb_writer *w, uint8_t *buf, size_t cap);
void pb_put_varint(struct pb_writer *w, uint32_t number, uint64_t value);
void pb_put_bytes(struct pb_writer *w, uint32_t number, const void *data, size_t len);

#endif
