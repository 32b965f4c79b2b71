/* Ray's TLS with the CA's key (RAYBOOT_TLS_CA_KEY): this pod's certificate and key for Ray, made
 * at start-up (lib/net/tlscert.c) for the pod's names and addresses and written only into
 * RAYBOOT_TLS_DIR, which must be memory-backed (tmpfs or ramfs: an emptyDir with medium Memory),
 * then named for Ray and the command by RAY_TLS_SERVER_CERT and RAY_TLS_SERVER_KEY. rayboot's own
 * prober makes its own in memory (lib/ray/raytls.c); certificates given as files are Ray's as
 * they are. */
#include "tlsfiles.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "env.h"
#include "log.h"
#include "raytls.h"
#include "strv.h"
#include "text.h"
#include "tlscert.h"

/* statfs(2)'s f_type of the two memory-backed file systems (linux/magic.h). */
#define TLSFILES_TMPFS_MAGIC 0x01021994L
#define TLSFILES_RAMFS_MAGIC 0x858458f6L

static bool is_ip(const char *s)
{
    unsigned char buf[16];
    return inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1;
}

static int add_unique(struct strv *v, const char *s)
{
    if (!s || !s[0])
        return 0;
    for (size_t i = 0; i < v->len; i++)
        if (strcmp(v->items[i], s) == 0)
            return 0;
    return strv_push(v, s);
}

/* Whatever a Ray process may dial this pod by: its host name and pod name, on the head the head's
 * names as workers are told them (ray start --address), its IP (--node-ip-address, which Ray
 * dials for every node), and loopback (the head's own processes). */
static int gather(const struct plan *p, const char *hostname, struct strv *names, struct strv *ips)
{
    const char *all[] = {hostname,
                         p->pod_name,
                         p->role == PLAN_ROLE_HEAD ? p->head_host : NULL,
                         p->role == PLAN_ROLE_HEAD ? p->head_fqdn : NULL,
                         p->pod_ip,
                         "localhost",
                         "127.0.0.1"};
    int rc = 0;
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        rc |= add_unique(all[i] && is_ip(all[i]) ? ips : names, all[i]);
    return rc ? -1 : 0; /* both hold loopback's: never empty, so NULL-terminated */
}

static int check_memory_backed(const char *dir, struct errbuf *err)
{
    struct statfs fs;
    if (statfs(dir, &fs) < 0)
        return errbuf_set(err, "RAYBOOT_TLS_DIR=%.300s: %s", dir, strerror(errno));
    if ((long)fs.f_type != TLSFILES_TMPFS_MAGIC && (long)fs.f_type != TLSFILES_RAMFS_MAGIC)
        return errbuf_set(err,
                          "RAYBOOT_TLS_DIR=%.300s is not memory-backed (file system 0x%lx): the pod's private key is "
                          "written there; mount an emptyDir with medium: Memory",
                          dir, (unsigned long)fs.f_type);
    return 0;
}

/* Writes the whole text to dir/name with mode, replacing what was there; never follows a link. */
static int write_file(const char *dir, const char *name, const char *text, size_t len, mode_t mode, char *path,
                      size_t cap, struct errbuf *err)
{
    int fd;
    ssize_t n;
    if (text_format(path, cap, "%s/%s", dir, name) < 0)
        return errbuf_set(err, "RAYBOOT_TLS_DIR=%.300s: the path is too long", dir);
    (void)unlink(path);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0)
        return errbuf_set(err, "%.400s: %s", path, strerror(errno));
    n = write(fd, text, len);
    if (close(fd) < 0 || n != (ssize_t)len)
        return errbuf_set(err, "%.400s: could not be written whole", path);
    return 0;
}

static int make_and_write(const struct plan *p, const char *const *envp, const char *hostname, char *cert_path,
                          char *key_path, size_t cap, struct errbuf *err)
{
    const char *dir = env_lookup_nonempty(envp, "RAYBOOT_TLS_DIR"), *ca_path = env_lookup(envp, "RAY_TLS_CA_CERT");
    const char *ca_key_path = env_lookup(envp, "RAYBOOT_TLS_CA_KEY");
    struct strv names, ips;
    struct tlscert_request req;
    struct tlscert made = {NULL, 0, NULL, 0};
    char *ca = NULL, *ca_key = NULL;
    size_t ca_len = 0, ca_key_len = 0;
    long hours;
    int rc = -1;

    if (!dir)
        return errbuf_set(err, "RAYBOOT_TLS_CA_KEY is set but RAYBOOT_TLS_DIR is not: name a memory-backed directory "
                               "(an emptyDir with medium: Memory) for this pod's key");
    strv_init(&names);
    strv_init(&ips);
    if (check_memory_backed(dir, err) == 0 && raytls_cert_hours(envp, &hours, err) == 0 &&
        raytls_read_pem("RAY_TLS_CA_CERT", ca_path, &ca, &ca_len, err) == 0 &&
        raytls_read_pem("RAYBOOT_TLS_CA_KEY", ca_key_path, &ca_key, &ca_key_len, err) == 0) {
        if (gather(p, hostname, &names, &ips) < 0) {
            errbuf_set(err, "out of memory");
        } else {
            req = (struct tlscert_request){ca,
                                           ca_len,
                                           ca_key,
                                           ca_key_len,
                                           hostname,
                                           (const char *const *)names.items,
                                           (const char *const *)ips.items,
                                           time(NULL),
                                           hours * 3600L};
            rc = tlscert_make(&req, &made, err) < 0 ? errbuf_prefix(err, "RAYBOOT_TLS_CA_KEY=%.300s", ca_key_path) : 0;
        }
    }
    if (rc == 0)
        rc = write_file(dir, "tls.key", made.key_pem, made.key_len, 0600, key_path, cap, err) < 0 ||
                     write_file(dir, "tls.crt", made.cert_pem, made.cert_len, 0644, cert_path, cap, err) < 0
                 ? -1
                 : 0;
    if (rc == 0)
        log_info("Ray TLS: this pod's certificate for %zu names and %zu addresses, valid %ld h, in %s (its key in %s, "
                 "memory-backed)",
                 names.len, ips.len, hours, cert_path, key_path);
    if (ca_key)
        explicit_bzero(ca_key, ca_key_len);
    free(ca_key);
    free(ca);
    tlscert_free(&made);
    strv_free(&names);
    strv_free(&ips);
    return rc;
}

int tlsfiles_make(const struct plan *p, const char *const *envp, const char *hostname, struct strv *ray_env,
                  struct errbuf *err)
{
    char cert_path[512], key_path[512];
    if (!raytls_wanted(envp) || !env_lookup_nonempty(envp, "RAYBOOT_TLS_CA_KEY") ||
        (env_lookup_nonempty(envp, "RAY_TLS_SERVER_CERT") && env_lookup_nonempty(envp, "RAY_TLS_SERVER_KEY")))
        return 0; /* no TLS, or the files are given: Ray reads them as they are */
    if (make_and_write(p, envp, hostname && hostname[0] ? hostname : p->pod_name, cert_path, key_path,
                       sizeof(cert_path), err) < 0)
        return -1;
    if (strv_pushf(ray_env, "RAY_TLS_SERVER_CERT=%s", cert_path) < 0 ||
        strv_pushf(ray_env, "RAY_TLS_SERVER_KEY=%s", key_path) < 0)
        return errbuf_set(err, "out of memory");
    return 0;
}
