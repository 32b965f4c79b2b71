/* A bounded libcurl write callback: the body of one reply, grown as it arrives, refused past a
 * limit (the transfer then aborts), always NUL-terminated. The sidecar's Kubernetes API call and
 * the submitter's dashboard calls both use it. */
#ifndef RAYBOOT_CURLBODY_H
#define RAYBOOT_CURLBODY_H

#include <stdbool.h>
#include <stddef.h>

struct curl_body {
    char *buf;   /* NULL until the first byte; then len bytes and a NUL */
    size_t len;
    size_t max;  /* more than this aborts the transfer with too_big set */
    bool too_big;
};

/* CURLOPT_WRITEFUNCTION with CURLOPT_WRITEDATA = a struct curl_body. */
size_t curl_body_write(char *data, size_t size, size_t n, void *body);

#endif
