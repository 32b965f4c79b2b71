/* Parsing a whole JSON document from a buffer of known length (no NUL needed), refusing anything
 * but whitespace after it: replies from the network are parsed this way, never with strlen. */
#ifndef RAYBOOT_JSON_H
#define RAYBOOT_JSON_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* NULL when text is not exactly one JSON value. Free with cJSON_Delete. */
cJSON *json_parse_exact(const char *text, size_t len);

/* Copies a JSON string into out (cut to cap), keeping only printable ASCII, so that text from the
 * network cannot forge log lines. "" when item is not a string. */
void json_copy_printable(char *out, size_t cap, const cJSON *item);

#endif
