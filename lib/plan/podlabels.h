/* The downward API's labels file (a downwardAPI volume item with fieldRef metadata.labels): one
 * key="value" line per label, sorted, the value quoted the way Go's strconv.Quote does. */
#ifndef RAYBOOT_PODLABELS_H
#define RAYBOOT_PODLABELS_H

#include <stddef.h>

#include "errbuf.h"

/* Where rayboot looks for it (under RAYBOOT_ROOT): the path the Kubernetes documentation's own
 * downward API example uses. */
#define PODLABELS_FILE "/etc/podinfo/labels"
/* A pod's whole object is at most 1.5 MiB in etcd, and labels are a small part of it: a file
 * larger than this is not the kubelet's. */
#define PODLABELS_FILE_MAX_BYTES (256 * 1024)
/* A label key is at most a 253-byte prefix, '/', and a 63-byte name. */
#define PODLABELS_KEY_MAX_BYTES 317

/* Checks every line of text. Returns 0, or -1 with a message naming file (the name to put in
 * it) and the line that is not key="value". */
int podlabels_check(const char *text, const char *file, struct errbuf *err);

/* The value of key in text (checked by podlabels_check) into value, unquoted. Returns 1 when
 * found, 0 when absent, -1 when the value does not fit in cap bytes. */
int podlabels_get(const char *text, const char *key, char *value, size_t cap);

#endif
