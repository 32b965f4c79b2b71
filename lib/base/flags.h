/* Go `flag` syntax, shared by rayboot's command line and RAYBOOT_PLUGIN_ARGS, because users copy
 * the Volcano ray plugin's arguments verbatim: -name, --name, -name=value, --name=value, and
 * -name value for flags that take a value. */
#ifndef RAYBOOT_FLAGS_H
#define RAYBOOT_FLAGS_H

#include <stdbool.h>

#include "errbuf.h"

/* Longer names are not flags of ours or Volcano's; they get an error, not truncation. */
#define FLAG_NAME_MAX_BYTES 64

enum flag_kind {
    FLAG_END,        /* no more arguments */
    FLAG_OPTION,     /* name (and value, or NULL) */
    FLAG_POSITIONAL, /* value holds the argument */
    FLAG_TERMINATOR, /* "--": everything after it is the user's command */
};

struct flag_iter {
    int argc;
    char *const *argv;
    int index;
};

struct flag {
    char name[FLAG_NAME_MAX_BYTES];
    const char *value;
};

/* takes_value says whether a flag consumes the next argument when written without '='. */
typedef bool (*flag_takes_value_fn)(const char *name);

/* Returns an enum flag_kind, or -1 with a message (bad syntax, missing value). */
int flag_next(struct flag_iter *it, flag_takes_value_fn takes_value, struct flag *out, struct errbuf *err);

/* For a flag that is only a switch (--help): a value given to it (--help=x) is an error, not
 * something to ignore silently. Returns 0, or -1 with a message naming the flag. */
int flag_refuse_value(const struct flag *f, struct errbuf *err);

#endif
