/* Ray's token authentication (Ray 2.5x/2.60 `RAY_AUTH_MODE=token`) as a client sees it: whether to
 * send a token, which one (found where Ray's own loader finds it), and the header that carries
 * it. */
#ifndef RAYBOOT_RAYAUTH_H
#define RAYBOOT_RAYAUTH_H

#include <stdbool.h>

#include "errbuf.h"

/* A Ray token is 32 hex digits, a Kubernetes service account token a JWT of one or two KiB; gRPC
 * servers take 8 KiB of metadata in all, so a token past this is a wrong file, not a token. */
#define RAYAUTH_TOKEN_MAX_BYTES 4096
/* "authorization: Bearer " and the token. */
#define RAYAUTH_HEADER_MAX_BYTES (RAYAUTH_TOKEN_MAX_BYTES + 32)
/* Where the token was found, for the log (never the token): a variable or a path. */
#define RAYAUTH_SOURCE_MAX_BYTES 600

/* The token Ray's Kubernetes mode (RAY_ENABLE_K8S_TOKEN_AUTH) reads: the projected service account
 * token KubeRay mounts (read under RAYBOOT_ROOT). */
#define RAYAUTH_K8S_TOKEN_FILE "/var/run/secrets/ray.io/serviceaccount/token"

struct rayauth {
    bool token_mode;     /* send the token: RAY_AUTH_MODE=token, or unset with a token found */
    bool enable_for_ray; /* RAY_AUTH_MODE was unset: ray start and the command get RAY_AUTH_MODE=token */
    char source[RAYAUTH_SOURCE_MAX_BYTES]; /* "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH=/p", "/home/u/.ray/auth_token" */
    char header[RAYAUTH_HEADER_MAX_BYTES]; /* "authorization: Bearer <token>", or "" when not token_mode */
};

/* Decides as Ray 2.60 does, from envp (and HOME, else the user's passwd entry, for the default
 * file ~/.ray/auth_token; root prefixes the Kubernetes token's path only):
 * - RAY_AUTH_MODE=token (any case): a token must be found, else -1 naming every place looked at;
 * - RAY_AUTH_MODE set to anything else: no token is sent;
 * - RAY_AUTH_MODE unset: token mode when a token is found (what `ray start --head` and
 *   `ray.init()` do), and then enable_for_ray.
 * The token: RAY_AUTH_TOKEN if non-empty (even if only blanks), else the file RAY_AUTH_TOKEN_PATH
 * names (an error if it cannot be read or its first line is blank), else with
 * RAY_ENABLE_K8S_TOKEN_AUTH the Kubernetes token file, else ~/.ray/auth_token; a file's first line
 * only, blanks trimmed at both ends. A token of more than RAYAUTH_TOKEN_MAX_BYTES or with a control
 * character is refused. Messages name the variable or the file, never the token. */
int rayauth_load(const char *const *envp, const char *root, struct rayauth *a, struct errbuf *err);

/* Zeroes the header (the token) for good. */
void rayauth_clear(struct rayauth *a);

/* Ray's token authentication came in Ray 2.52; an older Ray ignores RAY_AUTH_MODE and serves anyone. */
#define RAYAUTH_MIN_MAJOR 2UL
#define RAYAUTH_MIN_MINOR 52UL

/* Whether the Ray that will run (version: its package's, as the plan read it; from: the file it
 * came from; "" when unknown) honours a's token mode. 0 when it does, when a is not in token mode,
 * or when the version is unknown (nothing to go by); -1 with the reason when RAY_AUTH_MODE=token
 * was asked for by name and Ray is older than 2.52 (a cluster that looks protected and serves
 * anyone: exit 2); 1 with the same reason when token mode only followed a token that was found
 * (RAY_AUTH_MODE unset): the caller warns and goes on, as Ray itself would. */
int rayauth_check_ray(const struct rayauth *a, const char *version, const char *from, struct errbuf *err);

/* Ray's boolean settings (RAY_USE_TLS, RAY_ENABLE_K8S_TOKEN_AUTH): "1" or "true", any case. */
bool rayauth_true(const char *v);

#endif
