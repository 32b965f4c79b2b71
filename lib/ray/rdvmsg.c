/* The rendezvous messages' parser: a prefix of either message is "read more", a whole one at the
 * front is that message (what follows is the caller's to parse next), anything else is not our
 * head. */
#include "rdvmsg.h"

#include <string.h>

static const char serving[] = RENDEZVOUS_MESSAGE;
static const char finished[] = RENDEZVOUS_FINISHED_MESSAGE;

/* 1: buf starts with the whole message; 0: buf is a proper prefix of it; -1: neither. */
static int match(const char *buf, size_t len, const char *message, size_t want)
{
    size_t n = len < want ? len : want;
    if (memcmp(buf, message, n) != 0)
        return -1;
    return len >= want ? 1 : 0;
}

enum rendezvous_parse_result rendezvous_parse(const char *buf, size_t len, size_t *used)
{
    int s, f;
    *used = 0;
    if (len > RENDEZVOUS_READ_MAX)
        len = RENDEZVOUS_READ_MAX; /* both messages are shorter: a whole one is within it */
    s = match(buf, len, serving, sizeof(serving) - 1);
    f = match(buf, len, finished, sizeof(finished) - 1);
    if (s == 1) {
        *used = sizeof(serving) - 1;
        return RENDEZVOUS_SERVING;
    }
    if (f == 1) {
        *used = sizeof(finished) - 1;
        return RENDEZVOUS_FINISHED;
    }
    return s == 0 || f == 0 ? RENDEZVOUS_INCOMPLETE : RENDEZVOUS_BAD;
}
