/* JSON in and out. In: a whole document from a buffer of known length (no NUL needed), refusing
 * anything but whitespace after it: replies from the network are parsed this way, never with
 * strlen. Out: every string through json_text, whatever bytes it held. */
#ifndef RAYBOOT_JSON_H
#define RAYBOOT_JSON_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* NULL when text is not exactly one JSON value. Free with cJSON_Delete. */
cJSON *json_parse_exact(const char *text, size_t len);

/* The one way text becomes a JSON string, whatever it holds: JSON is UTF-8 and cJSON does not
 * check, so each byte that is not part of a well-formed sequence becomes U+FFFD and the output
 * stays parseable. NULL when out of memory. */
cJSON *json_text(const char *s);
/* json_text added to obj under key: 0, or -1 when out of memory. */
int json_add_text(cJSON *obj, const char *key, const char *s);

/* Copies a JSON string into out (cut to cap), keeping only printable ASCII, so that text from the
 * network cannot forge log lines. "" when item is not a string. */
void json_copy_printable(char *out, size_t cap, const cJSON *item);

#endif
