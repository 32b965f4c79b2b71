/* The bounded reply body shared by every libcurl caller. */
#include "curlbody.h"

#include <stdlib.h>
#include <string.h>

size_t curl_body_write(char *data, size_t size, size_t n, void *arg)
{
    struct curl_body *b = arg;
    size_t add = size * n;
    char *grown;

    if (add > b->max || b->len > b->max - add) {
        b->too_big = true;
        return 0; /* libcurl aborts the transfer: CURLE_WRITE_ERROR */
    }
    grown = realloc(b->buf, b->len + add + 1);
    if (!grown)
        return 0;
    b->buf = grown;
    memcpy(grown + b->len, data, add);
    b->len += add;
    grown[b->len] = '\0';
    return add;
}
