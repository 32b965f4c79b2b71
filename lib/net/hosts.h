/* The kubelet-written /etc/hosts: where a pod learns its own fully qualified name and address, and
 * where a name is looked up before the nameservers are asked. */
#ifndef RAYBOOT_HOSTS_H
#define RAYBOOT_HOSTS_H

#include <stddef.h>

#include "dnsname.h"

/* The kubelet writes a few lines; anything near this size is not its file. */
#define HOSTS_FILE_MAX_BYTES (1024 * 1024)

/* Finds the line naming `hostname` and returns in fqdn the first name on it that starts with
 * "hostname." (e.g. J-T-0.J.NS.svc.cluster.local for J-T-0). Returns 0, or -1 when there is none. */
int hosts_find_fqdn(const char *text, const char *hostname, char fqdn[DNS_NAME_MAX_BYTES + 1]);

/* Finds name (case-insensitive, a trailing dot ignored) among the names of a line and copies
 * that line's address into addr. Returns 0, or -1 when no line names it. */
int hosts_lookup_addr(const char *text, const char *name, char *addr, size_t addr_cap);

/* The same, skipping lines whose address is loopback (127.0.0.0/8, ::1): Docker, a VM's distro
 * and a hostNetwork pod name the host there ("127.0.1.1 myhost"), which says nothing about the
 * address the rest of the cluster reaches it at. For a host's own address, never another's. */
int hosts_lookup_own_addr(const char *text, const char *name, char *addr, size_t addr_cap);

#endif
