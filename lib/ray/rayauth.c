/* Finding Ray's authentication token in the places and the order Ray 2.60's own loader
 * (AuthenticationTokenLoader) looks. Ray's TLS is lib/ray/raytls.c's. Sending the header is grpc.c's and
 * init/dashboard.c's; what an UNAUTHENTICATED answer means is the waits'. */
#include "rayauth.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "dotversion.h"
#include "env.h"
#include "fsroot.h"
#include "text.h"

/* A token file is one short line; anything this large is not one. */
#define RAYAUTH_FILE_MAX_BYTES 65536

/* Ray trims exactly these (" \t\n\r\f\v") from both ends. */
static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

bool rayauth_true(const char *v)
{
    return v && (strcmp(v, "1") == 0 || strcasecmp(v, "true") == 0);
}

/* The token in text[0..len) trimmed; sets *start and *out_len. */
static void trim(const char *text, size_t len, size_t *start, size_t *out_len)
{
    size_t b = 0, e = len;
    while (b < e && is_blank(text[b]))
        b++;
    while (e > b && is_blank(text[e - 1]))
        e--;
    *start = b;
    *out_len = e - b;
}

/* Checks the token and writes the header. `source` names it in the messages. */
static int set_token(struct rayauth *a, const char *token, size_t len, struct errbuf *err)
{
    if (len > RAYAUTH_TOKEN_MAX_BYTES)
        return errbuf_set(err, "%s: the token is longer than %d bytes", a->source, RAYAUTH_TOKEN_MAX_BYTES);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)token[i];
        /* A header value cannot hold a control character (gRPC refuses it, and a newline would
         * start a header of its own). */
        if (c < 0x20 || c == 0x7f)
            return errbuf_set(err, "%s: the token holds a control character (byte %zu)", a->source, i + 1);
    }
    text_format(a->header, sizeof(a->header), "authorization: Bearer %.*s", (int)len, token);
    return 0;
}

/* A file's first line, trimmed; *found false when the file is missing, unreadable or the line is
 * blank (Ray treats all of these alike). why: the reason it could not be read. */
static int from_file(struct rayauth *a, const char *root, const char *path, bool *found, char *why, size_t why_cap,
                     struct errbuf *err)
{
    char *text = NULL;
    size_t len = 0, start, tok_len;
    struct errbuf read_err;
    int rc;
    *found = false;
    if (fsroot_read(root, path, RAYAUTH_FILE_MAX_BYTES, &text, &len, &read_err) < 0) {
        snprintf(why, why_cap, "%s", read_err.msg);
        return 0;
    }
    len = strcspn(text, "\n"); /* the first line (Ray reads with getline) */
    trim(text, len, &start, &tok_len);
    if (tok_len == 0) {
        snprintf(why, why_cap, "%s: the first line is empty", path);
        explicit_bzero(text, strlen(text));
        free(text);
        return 0;
    }
    rc = set_token(a, text + start, tok_len, err);
    explicit_bzero(text, strlen(text));
    free(text);
    *found = rc == 0;
    return rc;
}

/* ~/.ray/auth_token: HOME, or (as Ray does without HOME) the user's home in the passwd file. */
static int default_path(const char *const *envp, char *out, size_t cap)
{
    const char *home = env_lookup_nonempty(envp, "HOME");
    if (!home) {
        const struct passwd *pw = getpwuid(getuid());
        home = pw && pw->pw_dir && pw->pw_dir[0] ? pw->pw_dir : ".";
    }
    return snprintf(out, cap, "%s/.ray/auth_token", home) < (int)cap ? 0 : -1;
}

/* The sources in Ray's order. *found false (and 0) when none has a token. */
static int find_token(const char *const *envp, const char *root, struct rayauth *a, bool *found, struct errbuf *err)
{
    const char *env_token = env_lookup_nonempty(envp, "RAY_AUTH_TOKEN");
    const char *path = env_lookup_nonempty(envp, "RAY_AUTH_TOKEN_PATH");
    char why[ERRBUF_MAX_BYTES] = "", home_file[512];
    size_t start, len;

    *found = false;
    if (env_token) {
        /* A value of blanks only ends the search with no token, as in Ray. */
        snprintf(a->source, sizeof(a->source), "RAY_AUTH_TOKEN");
        trim(env_token, strlen(env_token), &start, &len);
        if (len == 0)
            return 0;
        *found = true;
        return set_token(a, env_token + start, len, err);
    }
    if (path) {
        snprintf(a->source, sizeof(a->source), "RAY_AUTH_TOKEN_PATH=%.500s", path);
        if (from_file(a, NULL, path, found, why, sizeof(why), err) < 0)
            return -1;
        if (!*found)
            return errbuf_set(err, "RAY_AUTH_TOKEN_PATH is set but gives no token: %.700s", why);
        return 0;
    }
    if (rayauth_true(env_lookup(envp, "RAY_ENABLE_K8S_TOKEN_AUTH"))) {
        snprintf(a->source, sizeof(a->source), "%s (RAY_ENABLE_K8S_TOKEN_AUTH)", RAYAUTH_K8S_TOKEN_FILE);
        if (from_file(a, root, RAYAUTH_K8S_TOKEN_FILE, found, why, sizeof(why), err) < 0 || *found)
            return *found ? 0 : -1;
    }
    if (default_path(envp, home_file, sizeof(home_file)) < 0)
        return 0;
    snprintf(a->source, sizeof(a->source), "%s", home_file);
    return from_file(a, NULL, home_file, found, why, sizeof(why), err);
}

int rayauth_load(const char *const *envp, const char *root, struct rayauth *a, struct errbuf *err)
{
    const char *mode = env_lookup(envp, "RAY_AUTH_MODE");
    bool found;
    memset(a, 0, sizeof(*a));
    /* Set to anything but "token" (even empty): Ray sends no token and looks for none. */
    if (mode && strcasecmp(mode, "token") != 0)
        return 0;
    if (find_token(envp, root, a, &found, err) < 0) {
        rayauth_clear(a);
        return -1;
    }
    if (!found) {
        rayauth_clear(a);
        if (!mode)
            return 0;
        return errbuf_set(err,
                          "RAY_AUTH_MODE=%s but no token was found: set RAY_AUTH_TOKEN, or RAY_AUTH_TOKEN_PATH to a "
                          "file that holds it, or write it to ~/.ray/auth_token (HOME=%.300s)%s",
                          mode, env_lookup_nonempty(envp, "HOME") ? env_lookup_nonempty(envp, "HOME") : "(unset)",
                          rayauth_true(env_lookup(envp, "RAY_ENABLE_K8S_TOKEN_AUTH"))
                              ? "; RAY_ENABLE_K8S_TOKEN_AUTH is on and " RAYAUTH_K8S_TOKEN_FILE " holds none"
                              : "");
    }
    a->token_mode = true;
    a->enable_for_ray = !mode;
    return 0;
}

void rayauth_clear(struct rayauth *a)
{
    explicit_bzero(a->header, sizeof(a->header));
    a->token_mode = false;
    a->enable_for_ray = false;
}

int rayauth_check_ray(const struct rayauth *a, const char *version, const char *from, struct errbuf *err)
{
    if (!a->token_mode || !version[0] || dotversion_at_least(version, RAYAUTH_MIN_MAJOR, RAYAUTH_MIN_MINOR) != 0)
        return 0;
    errbuf_set(err,
               "%s: Ray %s (%s) has no token authentication (Ray 2.52 and later have it): its GCS and dashboard "
               "accept anyone; %s",
               a->enable_for_ray ? "a Ray token was found" : "RAY_AUTH_MODE=token", version, from,
               a->enable_for_ray ? "the token is sent but nothing checks it (RAY_AUTH_MODE=disabled says so)"
                                 : "use Ray 2.52 or later, or set RAY_AUTH_MODE=disabled and keep strangers out "
                                   "with a NetworkPolicy");
    return a->enable_for_ray ? 1 : -1;
}
