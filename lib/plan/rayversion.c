/* Which Ray will run, read from its installed package's metadata: the version gate for flags
 * that only newer Rays take (--labels), before `ray start`. Reading the GCS's version (lib/ray)
 * comes after Ray is up; starting Python here would cost seconds on every pod. */
#include "rayversion.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "env.h"
#include "fsroot.h"
#include "text.h"

/* Ray's METADATA is ~24 KiB (its long description); the Version: line is in the first lines. */
#define RAYVERSION_METADATA_MAX_BYTES (256 * 1024)
/* Symlinks followed from the ray on PATH to the real script (a distro's /usr/bin/ray -> venv). */
#define RAYVERSION_SYMLINK_HOPS_MAX 16
/* Entries read in one lib/ or site-packages directory: a big environment has a few thousand. */
#define RAYVERSION_DIR_ENTRIES_MAX 50000

/* dst = a + sep + b, or -1 when it does not fit. */
static int join(char *dst, size_t cap, const char *a, const char *sep, const char *b)
{
    int n = text_format(dst, cap, "%s%s%s", a, sep, b);
    return (n < 0 || (size_t)n >= cap) ? -1 : 0;
}

/* An executable regular file at root + path. */
static int is_executable(const char *root, const char *path)
{
    char full[RAYVERSION_PATH_MAX_BYTES];
    struct stat st;
    return fsroot_path(root, path, full, sizeof(full)) == 0 && stat(full, &st) == 0 && S_ISREG(st.st_mode) &&
           access(full, X_OK) == 0;
}

/* Follows path's symlinks (an absolute target is under root too) to the file itself. */
static int resolve_links(const char *root, char *path, size_t cap)
{
    for (int hop = 0; hop < RAYVERSION_SYMLINK_HOPS_MAX; hop++) {
        char full[RAYVERSION_PATH_MAX_BYTES], target[RAYVERSION_PATH_MAX_BYTES], next[RAYVERSION_PATH_MAX_BYTES];
        ssize_t n;
        char *slash;
        if (fsroot_path(root, path, full, sizeof(full)) < 0)
            return -1;
        n = readlink(full, target, sizeof(target) - 1);
        if (n < 0)
            return errno == EINVAL ? 0 : -1; /* not a symlink: the file itself */
        target[n] = '\0';
        slash = strrchr(path, '/');
        if (target[0] == '/' || !slash) {
            if (join(next, sizeof(next), target, "", "") < 0)
                return -1;
        } else {
            *slash = '\0';
            if (join(next, sizeof(next), path, "/", target) < 0)
                return -1;
        }
        if (join(path, cap, next, "", "") < 0)
            return -1;
    }
    return -1;
}

/* A candidate for ray: its symlinks followed under root (-2 when they cannot be), then an
 * executable regular file (0) or not (-1). */
static int candidate(const char *root, char *path, size_t cap)
{
    char full[RAYVERSION_PATH_MAX_BYTES];
    struct stat st;
    if (fsroot_path(root, path, full, sizeof(full)) < 0 || lstat(full, &st) < 0)
        return -1;
    if (resolve_links(root, path, cap) < 0)
        return -2;
    return is_executable(root, path) ? 0 : -1;
}

/* ray's path as execve's PATH search finds it (lib/base/proc.c), its symlinks followed, into
 * out; -2 when the first one found is a symlink that cannot be followed (out is then its path). */
static int find_on_path(const char *root, const char *const *envp, const char *ray, char *out, size_t cap)
{
    const char *path = env_exec_path(envp);
    int rc;
    if (strchr(ray, '/'))
        return join(out, cap, ray, "", "") < 0 ? -1 : candidate(root, out, cap);
    while (*path) {
        size_t len = strcspn(path, ":");
        char dir[RAYVERSION_PATH_MAX_BYTES];
        /* An empty entry is the working directory, which a pod's files under root cannot say. */
        if (len > 0 && len < sizeof(dir)) {
            memcpy(dir, path, len);
            dir[len] = '\0';
            if (join(out, cap, dir, "/", ray) == 0 && (rc = candidate(root, out, cap)) != -1)
                return rc;
        }
        path += len + (path[len] == ':');
    }
    return -1;
}

int rayversion_locate(const char *root, const char *const *envp, const char *ray, char *out, size_t cap)
{
    return find_on_path(root, envp, ray, out, cap) < 0 ? -1 : 0;
}

/* The Version: line among METADATA's headers (they end at the first empty line). */
static int metadata_version(const char *text, char version[RAYVERSION_MAX_BYTES])
{
    const char *line = text;
    while (*line && *line != '\n' && *line != '\r') {
        size_t len = strcspn(line, "\r\n");
        if (strncmp(line, "Version:", 8) == 0) {
            const char *v = line + 8;
            size_t vlen = len - 8;
            while (vlen && (*v == ' ' || *v == '\t')) {
                v++;
                vlen--;
            }
            while (vlen && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
                vlen--;
            if (vlen == 0 || vlen >= RAYVERSION_MAX_BYTES)
                return -1;
            for (size_t i = 0; i < vlen; i++) {
                if (v[i] <= ' ' || v[i] > '~')
                    return -1;
            }
            memcpy(version, v, vlen);
            version[vlen] = '\0';
            return 0;
        }
        line += len;
        line += *line == '\r';
        line += *line == '\n';
    }
    return -1;
}

/* The ray-V.dist-info entry of the site directory dir (under root), into name. */
static int find_dist_info(const char *root, const char *dir, char *name, size_t cap)
{
    char full[RAYVERSION_PATH_MAX_BYTES];
    DIR *d;
    struct dirent *e;
    int found = -1;
    long seen = 0;
    if (fsroot_path(root, dir, full, sizeof(full)) < 0 || !(d = opendir(full)))
        return -1;
    while (found < 0 && seen++ < RAYVERSION_DIR_ENTRIES_MAX && (e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        /* "ray-2.60.0.dist-info", not "ray_cpp-..." nor "rayon-...". */
        if (strncmp(e->d_name, "ray-", 4) == 0 && e->d_name[4] >= '0' && e->d_name[4] <= '9' && len > 10 &&
            strcmp(e->d_name + len - 10, ".dist-info") == 0)
            found = join(name, cap, e->d_name, "", "");
    }
    closedir(d);
    return found;
}

/* prefix/LIB/python3.N/SITE/ray-V.dist-info/METADATA, the first python3.N with one, into out. */
static int find_metadata(const char *root, const char *prefix, const char *lib, char *out, size_t cap)
{
    static const char *const sites[] = {"site-packages", "dist-packages"};
    char libdir[RAYVERSION_PATH_MAX_BYTES], full[RAYVERSION_PATH_MAX_BYTES];
    DIR *d;
    struct dirent *e;
    long seen = 0;
    int found = -1;
    if (join(libdir, sizeof(libdir), prefix, "/", lib) < 0 || fsroot_path(root, libdir, full, sizeof(full)) < 0 ||
        !(d = opendir(full)))
        return -1;
    while (found < 0 && seen++ < RAYVERSION_DIR_ENTRIES_MAX && (e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "python3.", 8) != 0)
            continue;
        for (size_t s = 0; found < 0 && s < sizeof(sites) / sizeof(sites[0]); s++) {
            char dir[RAYVERSION_PATH_MAX_BYTES], site[RAYVERSION_PATH_MAX_BYTES], dist[256];
            if (join(dir, sizeof(dir), libdir, "/", e->d_name) < 0 ||
                join(site, sizeof(site), dir, "/", sites[s]) < 0 ||
                find_dist_info(root, site, dist, sizeof(dist)) < 0 || join(dir, sizeof(dir), site, "/", dist) < 0)
                continue;
            found = join(out, cap, dir, "/", "METADATA");
        }
    }
    closedir(d);
    return found;
}

void rayversion_read(const char *root, const char *const *envp, const char *ray, struct rayversion *out)
{
    char exe[RAYVERSION_PATH_MAX_BYTES], prefix[RAYVERSION_PATH_MAX_BYTES], meta[RAYVERSION_PATH_MAX_BYTES];
    char *text = NULL, *slash;
    struct errbuf err;
    int rc;

    memset(out, 0, sizeof(*out));
    rc = find_on_path(root, envp, ray, exe, sizeof(exe));
    if (rc == -2) {
        snprintf(out->why, sizeof(out->why), "%.200s: a symlink that cannot be followed", exe);
        return;
    }
    if (rc < 0) {
        snprintf(out->why, sizeof(out->why), "no executable %.200s%s%.200s", ray,
                 strchr(ray, '/') ? "" : " on PATH=", strchr(ray, '/') ? "" : env_exec_path(envp));
        return;
    }
    snprintf(prefix, sizeof(prefix), "%s", exe);
    /* PREFIX/bin/ray: two directories up. */
    for (int up = 0; up < 2; up++) {
        slash = strrchr(prefix, '/');
        if (slash)
            *slash = '\0';
    }
    if (!slash || (find_metadata(root, prefix, "lib", meta, sizeof(meta)) < 0 &&
                   find_metadata(root, prefix, "lib64", meta, sizeof(meta)) < 0)) {
        snprintf(out->why, sizeof(out->why),
                 "no ray-*.dist-info in %.200s/lib*/python3.*/{site,dist}-packages (the "
                 "prefix of %.200s)",
                 slash ? prefix : "?", exe);
        return;
    }
    if (fsroot_read(root, meta, RAYVERSION_METADATA_MAX_BYTES, &text, NULL, &err) < 0) {
        snprintf(out->why, sizeof(out->why), "%.400s", err.msg);
        return;
    }
    if (metadata_version(text, out->version) < 0)
        snprintf(out->why, sizeof(out->why), "%.400s: no Version: line among its headers", meta);
    else
        snprintf(out->from, sizeof(out->from), "%s", meta);
    free(text);
}
