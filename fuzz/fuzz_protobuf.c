/* libFuzzer target: lib/net/protobuf.c's reader on any bytes, and its writer on what the reader
 * found. Fields must lie inside the buffer and the reader must always advance; the varint and
 * bytes fields, written back with the writer, must read back the same; a writer that runs out of
 * room must say so rather than write past its buffer. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "protobuf.h"

/* Enough fields for any reply rayboot decodes; past this the input is only read, not re-encoded. */
#define FUZZ_FIELDS_MAX 256

static int same_field(const struct pb_field *a, const struct pb_field *b)
{
    if (a->number != b->number || a->wire != b->wire)
        return 0;
    if (a->wire == PB_BYTES)
        return a->len == b->len && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
    return a->varint == b->varint;
}

/* Writes the varint and bytes fields into a buffer of cap bytes (exactly that size, so ASan sees
 * any write past it); returns the writer's state. */
static struct pb_writer write_fields(const struct pb_field *fields, size_t n, uint8_t *buf, size_t cap)
{
    struct pb_writer w;
    pb_writer_init(&w, buf, cap);
    for (size_t i = 0; i < n; i++) {
        if (fields[i].wire == PB_VARINT)
            pb_put_varint(&w, fields[i].number, fields[i].varint);
        else if (fields[i].wire == PB_BYTES)
            pb_put_bytes(&w, fields[i].number, fields[i].data, fields[i].len);
    }
    return w;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct pb_reader r;
    struct pb_field f, *fields = malloc(FUZZ_FIELDS_MAX * sizeof(*fields));
    size_t n = 0;
    int rc;

    if (!fields)
        abort();
    pb_reader_init(&r, data, size);
    for (;;) {
        const uint8_t *before = r.p;
        rc = pb_next(&r, &f);
        if (rc != PB_FIELD)
            break;
        if (r.p <= before || r.p > data + size || f.number == 0 ||
            (f.wire == PB_BYTES && (f.data < data || f.len > (size_t)(data + size - f.data))))
            __builtin_trap();
        if (n < FUZZ_FIELDS_MAX && (f.wire == PB_VARINT || f.wire == PB_BYTES))
            fields[n++] = f;
    }
    if (rc == 0 && r.p != data + size)
        __builtin_trap();
    if (rc == 0) {
        /* Written canonically, the fields take no more room than they did. */
        uint8_t *out = malloc(size + 1);
        struct pb_writer w;
        size_t i = 0;
        if (!out)
            abort();
        w = write_fields(fields, n, out, size);
        if (w.overflow || w.len > size)
            __builtin_trap();
        pb_reader_init(&r, out, w.len);
        while ((rc = pb_next(&r, &f)) == PB_FIELD) {
            if (i >= n || !same_field(&f, &fields[i]))
                __builtin_trap();
            i++;
        }
        if (rc != 0 || i != n)
            __builtin_trap();
        if (w.len > 0) {
            uint8_t *tight = malloc(w.len - 1 + 1); /* w.len - 1 usable bytes; malloc(0) is avoided */
            struct pb_writer small;
            if (!tight)
                abort();
            small = write_fields(fields, n, tight, w.len - 1);
            if (!small.overflow || small.len > w.len - 1)
                __builtin_trap();
            free(tight);
        }
        free(out);
    }
    free(fields);
    return 0;
}
