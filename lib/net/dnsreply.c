/* Classifying the datagrams a nameserver sends, from their header alone. Parsing answers is
 * c-ares' job; this only tells a failure code, a truncated reply and garbage apart. */
#include "dnsreply.h"

#define DNS_FLAG_QR 0x80 /* first flags byte: this is a response */
#define DNS_FLAG_TC 0x02 /* first flags byte: truncated */
#define DNS_OPCODE_MASK 0x78
#define DNS_RCODE_MASK 0x0f /* second flags byte */

void dnsreply_note(struct dnsreply_seen *s, const unsigned char *msg, size_t copied, size_t len)
{
    int rcode;
    if (copied < DNSREPLY_HEADER_BYTES || len < DNSREPLY_HEADER_BYTES || !(msg[2] & DNS_FLAG_QR) ||
        (msg[2] & DNS_OPCODE_MASK) != 0 || msg[4] != 0 || msg[5] != 1) { /* QDCOUNT 1, as asked */
        s->not_dns++;
        return;
    }
    rcode = msg[3] & DNS_RCODE_MASK;
    if (rcode == DNSREPLY_RCODE_SERVFAIL || rcode == DNSREPLY_RCODE_NOTIMP || rcode == DNSREPLY_RCODE_REFUSED) {
        s->failures++;
        s->failure_rcode = rcode;
    } else if ((msg[2] & DNS_FLAG_TC) || len > DNSREPLY_UDP_MAX_BYTES) {
        s->truncated = true;
    } else {
        s->replies++;
    }
}

const char *dnsreply_rcode_reason(int rcode)
{
    switch (rcode) {
    case DNSREPLY_RCODE_FORMERR:
        return "FORMERR (the nameserver could not parse the query)";
    case DNSREPLY_RCODE_SERVFAIL:
        return "SERVFAIL (the nameserver failed to resolve the name)";
    case DNSREPLY_RCODE_NOTIMP:
        return "NOTIMP (the nameserver does not answer such queries)";
    case DNSREPLY_RCODE_REFUSED:
        return "REFUSED (the nameserver will not answer this pod)";
    default:
        return NULL;
    }
}

const char *dnsreply_reason(const struct dnsreply_seen *s)
{
    /* The most telling first: a nameserver that says it failed, then one whose answer did not
     * fit and could not be had over TCP, then garbage. */
    if (s->failures > 0)
        return dnsreply_rcode_reason(s->failure_rcode);
    if (s->truncated)
        return "truncated DNS reply, and no answer over TCP";
    if (s->not_dns > 0)
        return "malformed DNS reply (the nameserver sent bytes that are not a DNS reply)";
    if (s->replies > 0)
        return "malformed DNS reply (its ID or question does not match the query)";
    return NULL;
}
