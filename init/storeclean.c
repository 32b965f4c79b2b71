/* Deleting a finished job's GCS state from Redis: KubeRay does it from a Job when a RayCluster is
 * deleted (a finalizer); here the head does it itself, after its command and its Ray ended. Ray's
 * own function, not a Redis client of ours: the key layout (RAY<namespace>@..., cluster mode,
 * TLS) is Ray's to know and may change with it. When to call it is supervise.c's. */
#include "storeclean.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "fsroot.h"
#include "log.h"
#include "proc.h"
#include "rayversion.h"

/* A console script is a few hundred bytes; its #! line is its first. */
#define STORECLEAN_SCRIPT_MAX_BYTES (64 * 1024)
#define STORECLEAN_PATH_MAX_BYTES 512

/* Fixed text: every value it uses comes from the environment, never from this string. The
 * address is parsed as KubeRay's cleanup parses it (a list's first, an optional redis:// or
 * rediss:// scheme, credentials in it or in REDIS_USERNAME / REDIS_PASSWORD). */
static const char PROGRAM[] =
    "import os, sys\n"
    "from urllib.parse import urlparse\n"
    "from ray._private.gcs_utils import cleanup_redis_storage\n"
    "a = os.environ['RAY_REDIS_ADDRESS'].split(',')[0]\n"
    "u = urlparse(a if '://' in a else 'redis://' + a)\n"
    "ok = cleanup_redis_storage(host=u.hostname, port=u.port or 6379,\n"
    "    username=os.environ.get('REDIS_USERNAME') or u.username,\n"
    "    password=os.environ.get('REDIS_PASSWORD') or u.password or '',\n"
    "    use_ssl=u.scheme == 'rediss', storage_namespace=os.environ['RAY_external_storage_namespace'])\n"
    "sys.exit(0 if ok else 1)\n";

bool storeclean_wanted(const char *const *envp)
{
    return env_lookup_nonempty(envp, "RAY_REDIS_ADDRESS") &&
           env_lookup_nonempty(envp, "RAY_external_storage_namespace");
}

void storeclean_check(const char *const *envp)
{
    if (env_lookup_nonempty(envp, "RAY_REDIS_ADDRESS") && !env_lookup_nonempty(envp, "RAY_external_storage_namespace"))
        log_warn(
            "RAY_REDIS_ADDRESS is set and RAY_external_storage_namespace is not: Ray keeps this cluster's state in "
            "the namespace \"default\", which every cluster of that Redis shares, so this job may start from an "
            "old one's state, and it is not deleted when the job ends; set it to the job's uid (docs/gcs-ft.md)");
}

/* The interpreter of the script at path, and its one optional argument (as the kernel splits a
 * #! line: what follows the interpreter, trimmed, is one argument), into interp and arg. */
static int shebang(const char *root, const char *path, char *interp, char *arg, size_t cap, struct errbuf *err)
{
    char *text = NULL, *line, *rest;
    size_t len, tail;
    int rc = 0;
    interp[0] = arg[0] = '\0';
    if (fsroot_read(root, path, STORECLEAN_SCRIPT_MAX_BYTES, &text, NULL, err) < 0)
        return -1;
    if (strncmp(text, "#!", 2) != 0) { /* before text + 2: the file may be shorter */
        free(text);
        return errbuf_set(err, "%.200s has no #! line: not the Python script ray's package installs", path);
    }
    line = text + 2 + strspn(text + 2, " \t");
    line[strcspn(line, "\r\n")] = '\0';
    len = strcspn(line, " \t");
    rest = line + len + strspn(line + len, " \t");
    tail = strlen(rest);
    while (tail > 0 && (rest[tail - 1] == ' ' || rest[tail - 1] == '\t'))
        tail--;
    if (len == 0 || len >= cap || tail >= cap)
        rc = errbuf_set(err, "%.200s: its #! line is empty or too long", path);
    else {
        snprintf(interp, cap, "%.*s", (int)len, line);
        snprintf(arg, cap, "%.*s", (int)tail, rest);
    }
    free(text);
    return rc < 0 ? -1 : 0;
}

int storeclean_start(const char *root, char *const envp[], const char *ray, pid_t *pid, struct errbuf *err)
{
    char path[STORECLEAN_PATH_MAX_BYTES], interp[STORECLEAN_PATH_MAX_BYTES], arg[STORECLEAN_PATH_MAX_BYTES];
    char *argv[5];
    int n = 0, exec_errno;
    if (rayversion_locate(root, (const char *const *)envp, ray, path, sizeof(path)) < 0)
        return errbuf_set(err, "no executable %.200s to find Ray's Python by", ray);
    if (shebang(root, path, interp, arg, sizeof(interp), err) < 0)
        return -1;
    argv[n++] = interp;
    if (arg[0])
        argv[n++] = arg;
    argv[n++] = (char *)"-c"; /* execve takes char *const[]; nothing writes to it */
    argv[n++] = (char *)PROGRAM;
    argv[n] = NULL;
    return proc_spawn(argv, envp, pid, &exec_errno, err);
}
