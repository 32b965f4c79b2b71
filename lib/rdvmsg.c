/* The rendezvous message's parser: a prefix of the one message is "read more", the whole message
 * and nothing after it is SERVING, anything else is not our head. */
#include "rdvmsg.h"

#include <string.h>

enum rendezvous_parse_result rendezvous_parse(const char *buf, size_t len)
{
    static const char message[] = RENDEZVOUS_MESSAGE;
    size_t want = sizeof(message) - 1;
    size_t n = len < want ? len : want;
    if (len > RENDEZVOUS_READ_MAX)
        return RENDEZVOUS_BAD;
    if (memcmp(buf, message, n) != 0)
        return RENDEZVOUS_BAD;
    if (len < want)
        return RENDEZVOUS_INCOMPLETE;
    /* The head closes after the message: nothing may follow it. */
    return len == want ? RENDEZVOUS_SERVING : RENDEZVOUS_BAD;
}
