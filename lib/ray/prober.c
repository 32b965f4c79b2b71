/* The prober as its parent sees it: fork the child (prober_child.c), ask it and read its
 * replies within a deadline, stop it, and say how it ended. What to probe and when is the waiting
 * code's decision. */
#include "prober.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helper.h"
#include "log.h"
#include "monotime.h"
#include "prober_child.h"

/* Closing its socket ends the prober's loop; one stuck in a call is not waited for longer. */
#define PROBER_STOP_GRACE_MS 500

int prober_end_reason(pid_t pid, int status, struct errbuf *err)
{
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS)
        return errbuf_set(err,
                          "the prober (pid %d) was killed by SIGSYS: it made a system call outside "
                          "its seccomp allowlist (a rayboot bug; please report it)",
                          (int)pid);
    if (WIFSIGNALED(status))
        return errbuf_set(err, "the prober (pid %d) was killed by signal %d", (int)pid, WTERMSIG(status));
    return errbuf_set(err, "the prober (pid %d) exited with status %d", (int)pid, WEXITSTATUS(status));
}

/* Reaps a prober that stopped answering, and says how it ended. */
static int prober_died(struct prober *p, struct errbuf *err)
{
    int status = 0;
    pid_t pid = p->pid;
    if (helper_reap(&p->pid, &status) == 0)
        return prober_end_reason(pid, status, err);
    return errbuf_set(err, "the prober is gone");
}

/* Waits up to timeout_ms for one reply. */
static int receive_reply(struct prober *p, struct prober_reply *reply, long timeout_ms, struct errbuf *err)
{
    long deadline = monotime_ms() + timeout_ms;
    for (;;) {
        struct pollfd pfd = {p->fd, POLLIN, 0};
        long left = deadline - monotime_ms();
        ssize_t n;
        int rc;
        if (left <= 0) {
            helper_stop(&p->pid, NULL, 0, NULL);
            return errbuf_set(err, "the prober did not answer within %ld ms and was killed", timeout_ms);
        }
        rc = poll(&pfd, 1, (int)left);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc <= 0)
            continue;
        n = recv(p->fd, reply, sizeof(*reply), 0);
        if (n == (ssize_t)sizeof(*reply)) {
            reply->reason[sizeof(reply->reason) - 1] = '\0';
            reply->addr[sizeof(reply->addr) - 1] = '\0';
            reply->value[sizeof(reply->value) - 1] = '\0';
            return 0;
        }
        if (n < 0 && errno == EINTR)
            continue;
        return prober_died(p, err);
    }
}

static int child(int fd, void *root)
{
    prober_child_main(fd, root);
}

int prober_start(struct prober *p, const char *root, struct errbuf *err)
{
    int sv[2];
    struct prober_reply hello;

    p->pid = -1;
    p->fd = -1;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        return errbuf_set(err, "socketpair: %s", strerror(errno));
    if (helper_start(&p->pid, &p->fd, sv[0], sv[1], child, (void *)root, err) < 0)
        return -1;
    /* The first message says whether set-up and confinement worked. */
    if (receive_reply(p, &hello, 5000, err) < 0)
        return -1;
    if (hello.status != PROBER_OK) {
        errbuf_set(err, "%s", hello.reason);
        prober_stop(p);
        return -1;
    }
    return 0;
}

int prober_send(struct prober *p, const struct prober_request *req, struct errbuf *err)
{
    if (p->pid <= 0)
        return errbuf_set(err, "the prober is not running");
    if (send(p->fd, req, sizeof(*req), MSG_NOSIGNAL) != (ssize_t)sizeof(*req))
        return prober_died(p, err);
    return 0;
}

/* A reply's strings end inside their fields, and its status is one a reply can have. */
static enum prober_status checked(struct prober_reply *reply)
{
    reply->reason[sizeof(reply->reason) - 1] = '\0';
    reply->addr[sizeof(reply->addr) - 1] = '\0';
    reply->value[sizeof(reply->value) - 1] = '\0';
    if (reply->status != PROBER_OK && reply->status != PROBER_ABSENT && reply->status != PROBER_UNAUTHENTICATED)
        reply->status = PROBER_FAILED;
    return reply->status;
}

enum prober_status prober_receive(struct prober *p, struct prober_reply *reply, struct errbuf *err)
{
    ssize_t n = recv(p->fd, reply, sizeof(*reply), MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return PROBER_PENDING;
    if (n != (ssize_t)sizeof(*reply)) {
        prober_died(p, err);
        return PROBER_DIED;
    }
    return checked(reply);
}

enum prober_status prober_ask(struct prober *p, const struct prober_request *req, struct prober_reply *reply,
                              struct errbuf *err)
{
    if (prober_send(p, req, err) < 0)
        return PROBER_DIED;
    do {
        /* A wait rayboot cancelled may have sent news after it stopped listening: not this reply. */
        if (receive_reply(p, reply, PROBER_TIMEOUT_MS, err) < 0)
            return PROBER_DIED;
    } while (reply->wait.event != 0);
    return checked(reply);
}

void prober_abort(struct prober *p)
{
    helper_stop(&p->pid, &p->fd, 0, NULL);
}

void prober_stop(struct prober *p)
{
    int status = 0;
    pid_t pid = p->pid;
    if (helper_stop(&p->pid, &p->fd, PROBER_STOP_GRACE_MS, &status) == 0 && WIFSIGNALED(status) &&
        WTERMSIG(status) == SIGSYS) {
        /* Even on its way out (exit_group), a call outside the allowlist is a bug to report. */
        struct errbuf err;
        prober_end_reason(pid, status, &err);
        log_warn("%s", err.msg);
    }
}
