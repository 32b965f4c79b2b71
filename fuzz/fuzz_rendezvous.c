/* libFuzzer target: lib/ray/rdvmsg.c's parser on what a worker reads from the head's rendezvous
 * port (anything: an older head, another service on the port, an attacker in the pod network).
 * The input is read the way init/rdvwatch.c reads it, in pieces (each first byte says how many of
 * the next bytes arrive together) into a bounded buffer, each whole message taken off its front.
 * A message only for exactly its bytes; INCOMPLETE only for a proper prefix of one; once BAD or
 * FINISHED, the reader stops; the buffer never holds more than RENDEZVOUS_READ_MAX + 1 bytes. */
#include <string.h>

#include "fuzz.h"
#include "rdvmsg.h"

static const char serving[] = RENDEZVOUS_MESSAGE;
static const char finished[] = RENDEZVOUS_FINISHED_MESSAGE;

static int is_prefix(const char *buf, size_t len, const char *message, size_t mlen)
{
    return len < mlen && memcmp(buf, message, len) == 0;
}

static void check(const char *buf, size_t len, enum rendezvous_parse_result r, size_t used)
{
    size_t n = len < RENDEZVOUS_READ_MAX ? len : RENDEZVOUS_READ_MAX;
    if (r == RENDEZVOUS_SERVING && (used != sizeof(serving) - 1 || len < used || memcmp(buf, serving, used) != 0))
        __builtin_trap();
    if (r == RENDEZVOUS_FINISHED && (used != sizeof(finished) - 1 || len < used || memcmp(buf, finished, used) != 0))
        __builtin_trap();
    if ((r == RENDEZVOUS_INCOMPLETE || r == RENDEZVOUS_BAD) && used != 0)
        __builtin_trap();
    if (r == RENDEZVOUS_INCOMPLETE && !is_prefix(buf, n, serving, sizeof(serving) - 1) &&
        !is_prefix(buf, n, finished, sizeof(finished) - 1))
        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char buf[RENDEZVOUS_READ_MAX + 1];
    size_t len = 0, i = 0, used = 0;
    enum rendezvous_parse_result r = RENDEZVOUS_INCOMPLETE;

    while (i < size && r != RENDEZVOUS_BAD && r != RENDEZVOUS_FINISHED) {
        size_t piece = (size_t)(data[i++] % 8) + 1;
        if (piece > size - i)
            piece = size - i;
        if (piece > sizeof(buf) - len)
            piece = sizeof(buf) - len;
        if (piece == 0)
            break;
        memcpy(buf + len, data + i, piece);
        len += piece;
        i += piece;
        /* Every whole message off the front, as the watch does. */
        for (;;) {
            r = rendezvous_parse(buf, len, &used);
            check(buf, len, r, used);
            if (r != RENDEZVOUS_SERVING)
                break;
            memmove(buf, buf + used, len - used);
            len -= used;
        }
    }
    /* The whole input at once, too: a message only when the input starts with it. */
    r = rendezvous_parse((const char *)data, size, &used);
    check((const char *)data, size, r, used);
    return 0;
}
