/* libFuzzer target: lib/rdvmsg.c's parser on what a worker reads from the head's rendezvous
 * port (anything: an older head, another service on the port, an attacker in the pod network).
 * The input is read the way lib/gcswait.c reads it, in pieces (each first byte says how many of
 * the next bytes arrive together) into a bounded buffer. SERVING only for exactly the message;
 * once BAD or SERVING, the reader stops; nothing is read past RENDEZVOUS_READ_MAX + 1 bytes. */
#include <string.h>

#include "fuzz.h"
#include "rdvmsg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char message[] = RENDEZVOUS_MESSAGE;
    char buf[RENDEZVOUS_READ_MAX + 1];
    size_t len = 0, i = 0;
    enum rendezvous_parse_result r = RENDEZVOUS_INCOMPLETE;

    while (i < size && r == RENDEZVOUS_INCOMPLETE) {
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
        r = rendezvous_parse(buf, len);
        if (r == RENDEZVOUS_SERVING && (len != sizeof(message) - 1 || memcmp(buf, message, len) != 0))
            __builtin_trap();
        if (r == RENDEZVOUS_INCOMPLETE && (len >= sizeof(message) - 1 || memcmp(buf, message, len) != 0))
            __builtin_trap();
    }
    /* The whole input at once, too: the same answer for the same bytes whatever the pieces. */
    if (size <= RENDEZVOUS_READ_MAX) {
        enum rendezvous_parse_result whole = rendezvous_parse((const char *)data, size);
        if (whole == RENDEZVOUS_SERVING && (size != sizeof(message) - 1 || memcmp(data, message, size) != 0))
            __builtin_trap();
    }
    return 0;
}
