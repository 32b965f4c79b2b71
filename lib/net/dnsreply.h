/* What a nameserver sent that c-ares threw away. c-ares silently drops datagrams that are not a
 * reply to its query (garbage, a wrong ID) and, with several nameservers, skips those answering
 * SERVFAIL or REFUSED; a query that then fails is only "timeout" or "refused". lib/net/dns.c peeks
 * at each UDP datagram and notes it here, so the wait can name what really came back. */
#ifndef RAYBOOT_DNSREPLY_H
#define RAYBOOT_DNSREPLY_H

#include <stdbool.h>
#include <stddef.h>

/* A DNS header; anything shorter is not a DNS message. */
#define DNSREPLY_HEADER_BYTES 12
/* A UDP reply longer than this is truncated for a resolver without EDNS (c-ares' default). */
#define DNSREPLY_UDP_MAX_BYTES 512

/* The response codes that say a nameserver failed (RFC 1035 4.1.1). */
enum dnsreply_rcode {
    DNSREPLY_RCODE_FORMERR = 1,
    DNSREPLY_RCODE_SERVFAIL = 2,
    DNSREPLY_RCODE_NOTIMP = 4,
    DNSREPLY_RCODE_REFUSED = 5,
};

/* During one query: what came back, by kind. */
struct dnsreply_seen {
    unsigned not_dns;  /* datagrams that are no DNS reply at all (too short, not a response) */
    unsigned replies;  /* other replies; if the query still failed, c-ares dropped them (ID or question mismatch) */
    unsigned failures; /* replies with SERVFAIL, NOTIMP or REFUSED */
    int failure_rcode; /* the last of those */
    bool truncated;    /* a reply with the TC bit or too long for UDP: c-ares asks again over TCP */
};

/* Notes one datagram of len bytes (the whole datagram's length, even if fewer were copied into
 * msg); copied is how many bytes of it msg holds. */
void dnsreply_note(struct dnsreply_seen *s, const unsigned char *msg, size_t copied, size_t len);

/* Why a query that ended without an answer (timeout, refused) really failed, judging by what
 * was seen; NULL when nothing came back that explains it. */
const char *dnsreply_reason(const struct dnsreply_seen *s);

/* A failure response code (FORMERR, SERVFAIL, NOTIMP, REFUSED) named with what it means; NULL
 * for the others. */
const char *dnsreply_rcode_reason(int rcode);

#endif
