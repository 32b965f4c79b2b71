/* Splitting arguments into flags and values; what each flag means belongs to its owner. */
#include "flags.h"

#include <string.h>

int flag_next(struct flag_iter *it, flag_takes_value_fn takes_value, struct flag *out, struct errbuf *err)
{
    const char *arg, *name, *eq;
    size_t name_len;

    if (it->index >= it->argc)
        return FLAG_END;
    arg = it->argv[it->index++];
    out->name[0] = '\0';
    out->value = NULL;
    if (strcmp(arg, "--") == 0)
        return FLAG_TERMINATOR;
    if (arg[0] != '-' || arg[1] == '\0') {
        out->value = arg;
        return FLAG_POSITIONAL;
    }
    name = arg + (arg[1] == '-' ? 2 : 1);
    if (name[0] == '-' || name[0] == '=' || name[0] == '\0')
        return errbuf_set(err, "bad flag syntax: %s", arg);
    eq = strchr(name, '=');
    name_len = eq ? (size_t)(eq - name) : strlen(name);
    if (name_len >= FLAG_NAME_MAX_BYTES)
        return errbuf_set(err, "unknown flag %.*s...", FLAG_NAME_MAX_BYTES, arg);
    memcpy(out->name, name, name_len);
    out->name[name_len] = '\0';
    if (eq) {
        out->value = eq + 1;
    } else if (takes_value(out->name)) {
        if (it->index >= it->argc)
            return errbuf_set(err, "flag needs a value: --%s", out->name);
        out->value = it->argv[it->index++];
    }
    return FLAG_OPTION;
}

int flag_refuse_value(const struct flag *f, struct errbuf *err)
{
    if (f->value)
        return errbuf_set(err, "%s%s takes no value (got '%.40s')", f->name[1] ? "--" : "-", f->name, f->value);
    return 0;
}
