/* Secrets out of what rayboot and the sidecar show: `rayboot plan` (which the docs ask users to
 * paste into bug reports), every log line and the termination message. A value is a secret by
 * its name (a flag or variable that says password, token, secret, credential or API key: Redis'
 * --redis-password, REDIS_PASSWORD) or by its form (the password of a URL, user:pass@). What is
 * exec'd keeps the real values: this is for display only. */
#ifndef RAYBOOT_REDACT_H
#define RAYBOOT_REDACT_H

#include <stdbool.h>
#include <stddef.h>

#include "strv.h"

/* What a secret's value is shown as (rayboot plan's JSON keeps its shape: the string changes). */
#define REDACT_MARKER "<redacted>"

/* 1 when a flag or variable named name[0..len) ("--redis-password", "REDIS_PASSWORD") holds a
 * secret: its name holds password, passwd, token, secret, credential or apikey/api_key/api-key
 * (any case), and not path or file (RAY_AUTH_TOKEN_PATH names a file, not a token). */
bool redact_secret_name(const char *name, size_t len);

/* text for display, into dst (cut to cap - 1 bytes; cap > 0): each NAME=VALUE or --NAME=VALUE
 * whose name is a secret's has its value (up to the next blank) replaced by REDACT_MARKER, and each
 * URL password (scheme://user:PASSWORD@host) too. A word after a bare flag is left alone here (in
 * a line it is as likely prose as a value): lists are redact_strv's. Returns the bytes written. */
size_t redact_text(char *dst, size_t cap, const char *text);

/* An argv or a KEY=VALUE list for display, into out (initialised by the caller): each item as
 * redact_text makes it, and an item that follows a bare secret flag ("--redis-password", "pw")
 * replaced whole. 0, or -1 when out of memory. */
int redact_strv(const struct strv *in, struct strv *out);

#endif
