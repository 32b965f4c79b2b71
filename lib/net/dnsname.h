/* What counts as a host name or a DNS label in Kubernetes (RFC 1123, lower case). */
#ifndef RAYBOOT_DNSNAME_H
#define RAYBOOT_DNSNAME_H

#include <stdbool.h>
#include <stddef.h>

/* RFC 1123 limits: 63 bytes a label, 253 a name (without the trailing dot). */
#define DNS_LABEL_MAX_BYTES 63
#define DNS_NAME_MAX_BYTES 253

/* [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63 bytes: task, job and namespace names. */
bool dnsname_label_valid(const char *s, size_t len);
/* Dot-separated labels (upper case allowed, as resolvers fold it), at most 253 bytes. */
bool dnsname_valid(const char *s, size_t len);

/* The n-th dot-separated label of name (0-based) into out; -1 when there is none (or it does not
 * fit in cap). */
int dnsname_label_at(const char *name, int n, char *out, size_t cap);

#endif
