/* Ray's node label syntax (Ray 2.60's ray/_private/label_utils.py), checked before `ray start`
 * so that a bad label is refused at start-up naming it, not by Ray's abort in its log. */
#ifndef RAYBOOT_LABELSYNTAX_H
#define RAYBOOT_LABELSYNTAX_H

#include "errbuf.h"
#include "strv.h"

/* Ray's LABEL_REGEX: a key's name or a value, at most 63 bytes. */
#define LABELSYNTAX_NAME_MAX_BYTES 63
/* validate_label_key: a key's prefix (before the last '/') is at most 253 bytes. */
#define LABELSYNTAX_PREFIX_MAX_BYTES 253
/* More labels than this in one variable is a mistake, not a placement (KubeRay passes a handful). */
#define LABELSYNTAX_MAX_LABELS 256

/* NULL when Ray takes key (validate_label_key), else why not, in a static string. */
const char *labelsyntax_check_key(const char *key);
/* NULL when Ray takes value (validate_label_value: "" is allowed), else why not. */
const char *labelsyntax_check_value(const char *value);

/* Parses text as `ray start --labels` does (parse_node_labels_string: "k=v,k2=v2", surrounding
 * double quotes and the blanks around each key and value dropped, a later key replacing an
 * earlier one in its place) into "key=value" items appended to out. -1 with a message that
 * starts with name (the variable) and names the bad pair or key. */
int labelsyntax_parse(const char *name, const char *text, struct strv *out, struct errbuf *err);

/* Index of the item "key=..." in labels, or -1. */
long labelsyntax_find(const struct strv *labels, const char *key, size_t key_len);

#endif
