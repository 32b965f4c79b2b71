/* Protobuf wire format: tags, varints, length-delimited fields. What a field means is up to the
 * message's user (lib/ray/gcs.c); groups and other long-dead wire types are rejected. */
#include "protobuf.h"

#include <string.h>

void pb_reader_init(struct pb_reader *r, const uint8_t *buf, size_t len)
{
    r->p = buf;
    r->end = buf + len;
}

/* A varint is at most 10 bytes; anything longer is malformed, not just large. */
static int read_varint(struct pb_reader *r, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        uint8_t b;
        if (r->p >= r->end)
            return -1;
        b = *r->p++;
        if (shift == 63 && b > 1)
            return -1;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

static int read_fixed(struct pb_reader *r, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    if ((size_t)(r->end - r->p) < n)
        return -1;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)r->p[i] << (8 * i);
    r->p += n;
    *out = v;
    return 0;
}

enum pb_next pb_next(struct pb_reader *r, struct pb_field *f)
{
    uint64_t tag, len;
    if (r->p >= r->end)
        return PB_END;
    if (read_varint(r, &tag) < 0 || (tag >> 3) == 0 || (tag >> 3) > 0x1fffffff)
        return PB_MALFORMED;
    f->number = (uint32_t)(tag >> 3);
    f->wire = (enum pb_wire)(tag & 7);
    f->data = NULL;
    f->len = 0;
    f->varint = 0;
    switch (f->wire) {
    case PB_VARINT:
        return read_varint(r, &f->varint) < 0 ? PB_MALFORMED : PB_FIELD;
    case PB_FIXED64:
        return read_fixed(r, 8, &f->varint) < 0 ? PB_MALFORMED : PB_FIELD;
    case PB_FIXED32:
        return read_fixed(r, 4, &f->varint) < 0 ? PB_MALFORMED : PB_FIELD;
    case PB_BYTES:
        if (read_varint(r, &len) < 0 || len > (uint64_t)(r->end - r->p))
            return PB_MALFORMED;
        f->data = r->p;
        f->len = (size_t)len;
        r->p += len;
        return PB_FIELD;
    }
    return PB_MALFORMED;
}

void pb_writer_init(struct pb_writer *w, uint8_t *buf, size_t cap)
{
    w->buf = buf;
    w->len = 0;
    w->cap = cap;
    w->overflow = false;
}

static void write_raw_varint(struct pb_writer *w, uint64_t v)
{
    do {
        uint8_t b = v & 0x7f;
        v >>= 7;
        if (v)
            b |= 0x80;
        if (w->len >= w->cap) {
            w->overflow = true;
            return;
        }
        w->buf[w->len++] = b;
    } while (v);
}

void pb_put_varint(struct pb_writer *w, uint32_t number, uint64_t value)
{
    write_raw_varint(w, ((uint64_t)number << 3) | PB_VARINT);
    write_raw_varint(w, value);
}

void pb_put_bytes(struct pb_writer *w, uint32_t number, const void *data, size_t len)
{
    write_raw_varint(w, ((uint64_t)number << 3) | PB_BYTES);
    write_raw_varint(w, len);
    if (w->overflow || len > w->cap - w->len) {
        w->overflow = true;
        return;
    }
    memcpy(w->buf + w->len, data, len);
    w->len += len;
}
