/* Process and signal system calls, each wrapped small so callers read as policy. */
#include "proc.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "env.h"
#include "number.h"
#include "text.h"

/* A stat line is a few hundred bytes: 52 numbers and a command of at most 64. */
#define PROC_STAT_MAX_BYTES 4096
/* The parent's pid in /proc/<pid>/stat (proc(5)). */
#define PROC_STAT_FIELD_PPID 4
#define PROC_STAT_FIELD_PGRP 5
/* A process's open files looked at, at most: `ray start` holds a few dozen. */
#define PROC_OPEN_FILES_MAX 4096

void proc_catchable_signals(sigset_t *set)
{
    sigfillset(set);
    sigdelset(set, SIGKILL);
    sigdelset(set, SIGSTOP);
    /* Terminal job control and faults stay with their defaults: they are about this process. */
    sigdelset(set, SIGTSTP);
    sigdelset(set, SIGTTIN);
    sigdelset(set, SIGTTOU);
    sigdelset(set, SIGSEGV);
    sigdelset(set, SIGBUS);
    sigdelset(set, SIGILL);
    sigdelset(set, SIGFPE);
    sigdelset(set, SIGABRT);
    sigdelset(set, SIGSYS);
    sigdelset(set, SIGTRAP);
}

int proc_signalfd_open(const sigset_t *set, struct errbuf *err)
{
    int fd;
    if (sigprocmask(SIG_BLOCK, set, NULL) < 0)
        return errbuf_set(err, "sigprocmask: %s", strerror(errno));
    fd = signalfd(-1, set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (fd < 0)
        return errbuf_set(err, "signalfd: %s", strerror(errno));
    return fd;
}

int proc_become_subreaper(struct errbuf *err)
{
    if (getpid() == 1)
        return 0;
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
        return errbuf_set(err, "PR_SET_CHILD_SUBREAPER: %s", strerror(errno));
    return 0;
}

/* In the child, before exec: undo everything rayboot changed about signals. */
static void restore_signals(void)
{
    struct sigaction dfl;
    sigset_t empty;
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    /* Ignored dispositions survive exec; an ignored SIGTERM or SIGINT inherited by rayboot must
     * not stay ignored for Ray or the user's command. */
    for (int sig = 1; sig < NSIG; sig++)
        sigaction(sig, &dfl, NULL);
    sigemptyset(&empty);
    sigprocmask(SIG_SETMASK, &empty, NULL);
}

/* execve through PATH from the child's own environment (execvp would use rayboot's). */
static void exec_path(char *const argv[], char *const envp[])
{
    const char *path = env_exec_path((const char *const *)envp);
    char full[4096];
    int saved = ENOENT;

    if (strchr(argv[0], '/')) {
        execve(argv[0], argv, envp);
        return;
    }
    while (*path) {
        size_t len = strcspn(path, ":");
        /* An empty PATH entry means the current directory, as in execvp. */
        int n = len ? text_format(full, sizeof(full), "%.*s/%s", (int)len, path, argv[0])
                    : snprintf(full, sizeof(full), "./%s", argv[0]);
        if (n > 0 && (size_t)n < sizeof(full)) {
            execve(full, argv, envp);
            if (errno != ENOENT && errno != ENOTDIR)
                saved = errno; /* found but not executable: remember, keep looking */
        }
        path += len + (path[len] == ':');
    }
    errno = saved;
}

int proc_spawn(char *const argv[], char *const envp[], pid_t *pid, int *exec_errno, struct errbuf *err)
{
    int pipefd[2];
    int child_errno = 0;
    ssize_t n;
    pid_t parent = getpid();

    *exec_errno = 0;
    /* The close-on-exec pipe carries errno if exec fails; EOF means exec succeeded. */
    if (pipe2(pipefd, O_CLOEXEC) < 0)
        return errbuf_set(err, "pipe: %s", strerror(errno));
    *pid = fork();
    if (*pid < 0) {
        close(pipefd[0]);
        close(pipefd[1]);
        return errbuf_set(err, "fork: %s", strerror(errno));
    }
    if (*pid == 0) {
        close(pipefd[0]);
        setpgid(0, 0);
        /* When rayboot is a subreaper rather than PID 1, its death would orphan Ray; as PID 1
         * the kernel kills the namespace anyway. The getppid check closes the race with a
         * parent that died before the prctl. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
            _exit(127);
        restore_signals();
        exec_path(argv, envp);
        child_errno = errno;
        n = write(pipefd[1], &child_errno, sizeof(child_errno));
        (void)n;
        _exit(127);
    }
    close(pipefd[1]);
    setpgid(*pid, *pid); /* also from the parent, so the group exists before we signal it */
    do {
        n = read(pipefd[0], &child_errno, sizeof(child_errno));
    } while (n < 0 && errno == EINTR);
    close(pipefd[0]);
    if (n == (ssize_t)sizeof(child_errno)) {
        int status;
        waitpid(*pid, &status, 0);
        *exec_errno = child_errno;
        return errbuf_set(err, "%s: %s", argv[0], strerror(child_errno));
    }
    return 0;
}

int proc_exit_code(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return 1;
}

void proc_signal_group(pid_t pgid, int sig)
{
    if (pgid > 0)
        kill(-pgid, sig);
}

/* The fields of a /proc/<pid>/stat line start after the command (field 2), which is in
 * parentheses and may itself hold spaces or parentheses: so from the last ')'. */
static int stat_fields(const char *text, int first, long *out, size_t n)
{
    const char *p = strrchr(text, ')');
    if (!p || first < 3)
        return -1;
    for (int field = 2; field < first; field++) { /* p is at the end of field `field` */
        p = strchr(p + 1, ' ');
        if (!p)
            return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const char *start = p + 1;
        size_t len = strcspn(start, " \n");
        if (number_parse(start, len, 0, LONG_MAX, &out[i]) < 0)
            return -1;
        p = start + len;
    }
    return 0;
}

int proc_stat_fields(const char *pid_name, int first, long *out, size_t n)
{
    char path[64], buf[PROC_STAT_MAX_BYTES];
    FILE *f;
    size_t len;
    if (text_format(path, sizeof(path), "/proc/%s/stat", pid_name) >= (int)sizeof(path))
        return -1;
    f = fopen(path, "re");
    if (!f)
        return -1;
    len = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[len] = '\0';
    return stat_fields(buf, first, out, n);
}

int proc_comm(const char *pid_name, char *out, size_t cap)
{
    char path[64];
    ssize_t n;
    int fd;
    if (cap < 2 || text_format(path, sizeof(path), "/proc/%s/comm", pid_name) >= (int)sizeof(path))
        return -1;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    n = read(fd, out, cap - 1);
    close(fd);
    if (n <= 0)
        return -1;
    out[n] = '\0';
    out[strcspn(out, "\n")] = '\0';
    return 0;
}

static bool named(const char *path, const char *name)
{
    const char *slash = strrchr(path, '/');
    return strcmp(slash ? slash + 1 : path, name) == 0;
}

int proc_has_open(const char *pid_name, const char *name)
{
    char dir[64], target[PATH_MAX];
    struct dirent *de;
    int found = 0, looked = 0;
    DIR *d;
    if (text_format(dir, sizeof(dir), "/proc/%s/fd", pid_name) >= (int)sizeof(dir) || !(d = opendir(dir)))
        return -1;
    while (!found && looked < PROC_OPEN_FILES_MAX && (de = readdir(d)) != NULL) {
        ssize_t n;
        if (de->d_name[0] == '.')
            continue;
        looked++;
        n = readlinkat(dirfd(d), de->d_name, target, sizeof(target) - 1);
        if (n <= 0)
            continue; /* closed since readdir saw it */
        target[n] = '\0';
        found = named(target, name);
    }
    closedir(d);
    return found;
}

bool proc_each(proc_visit_fn visit, void *ctx)
{
    DIR *d = opendir("/proc");
    struct dirent *de;
    if (!d)
        return false;
    while ((de = readdir(d)) != NULL) {
        long pid;
        if (number_parse(de->d_name, strlen(de->d_name), 1, INT_MAX, &pid) == 0 && visit(de->d_name, (pid_t)pid, ctx))
            break;
    }
    closedir(d);
    return true;
}

struct group_match {
    pid_t pgid;
    const char *const *comms;
    size_t n;
    bool found;
};

static bool match_group_comm(const char *pid_name, pid_t pid, void *ctx)
{
    struct group_match *m = ctx;
    long group;
    char comm[32];
    (void)pid;
    if (proc_stat_fields(pid_name, PROC_STAT_FIELD_PGRP, &group, 1) < 0 || group != (long)m->pgid ||
        proc_comm(pid_name, comm, sizeof(comm)) < 0)
        return false;
    for (size_t i = 0; i < m->n && !m->found; i++)
        m->found = strcmp(comm, m->comms[i]) == 0;
    return m->found;
}

bool proc_group_has(pid_t pgid, const char *const *comms, size_t n)
{
    struct group_match m = {pgid, comms, n, false};
    proc_each(match_group_comm, &m);
    return m.found;
}

static pid_t parent_of(const char *pid_name)
{
    long ppid;
    return proc_stat_fields(pid_name, PROC_STAT_FIELD_PPID, &ppid, 1) < 0 ? -1 : (pid_t)ppid;
}

struct child_signal {
    pid_t self;
    int sig;
    const pid_t *keep;
    size_t nkeep;
    int count;
};

static bool signal_child(const char *pid_name, pid_t pid, void *ctx)
{
    struct child_signal *c = ctx;
    bool kept = false;
    if (pid < 2 || pid == c->self || parent_of(pid_name) != c->self)
        return false;
    for (size_t i = 0; i < c->nkeep; i++)
        kept = kept || c->keep[i] == pid;
    if (!kept && kill(pid, c->sig) == 0)
        c->count++;
    return false;
}

int proc_signal_children_except(int sig, const pid_t *keep, size_t nkeep)
{
    struct child_signal c = {getpid(), sig, keep, nkeep, 0};
    proc_each(signal_child, &c);
    return c.count;
}

int proc_signal_children(int sig)
{
    return proc_signal_children_except(sig, NULL, 0);
}
