/* Unit tests for lib/sandbox.c: what the prober's filter refuses (that every rule is needed is
 * tests/contract/test_seccomp_minimal.py's job). Each case confines a forked child and makes raw
 * system calls, so neither libc nor the sanitizers add calls of their own. */
#include <fcntl.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "sandbox.h"

/* Valgrind runs the client's system calls itself, and makes calls of its own that no filter of
 * ours allows: under it (make unit-valgrind) these tests cannot run. */
static bool under_valgrind(void)
{
    const char *preload = getenv("LD_PRELOAD");
    return preload && strstr(preload, "vgpreload");
}

enum call {
    CALL_NOTHING,
    CALL_SOCKET_TCP6,
    CALL_SOCKET_UDP4,
    CALL_MMAP_RW,
    CALL_MPROTECT_RW,
    CALL_SOCKET_UNIX,
    CALL_SOCKET_RAW,
    CALL_SOCKET_NETLINK,
    CALL_SOCKET_SEQPACKET,
    CALL_MMAP_EXEC,
    CALL_MPROTECT_EXEC,
    CALL_MADVISE_DONTNEED,
    CALL_MREMAP_FIXED,
    CALL_OPENAT,
    CALL_GETPPID,
    CALL_EXECVE,
    CALL_IOCTL_TIOCGWINSZ,
};

/* The calls the child makes, each checked for the success that proves it went through. */
static int make_call(enum call c)
{
    void *page = (void *)syscall(SYS_mmap, NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
        return 10;
    switch (c) {
    case CALL_NOTHING:
        return 0;
    case CALL_SOCKET_TCP6:
        return syscall(SYS_socket, AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0) >= 0 ? 0 : 11;
    case CALL_SOCKET_UDP4:
        return syscall(SYS_socket, AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0) >= 0 ? 0 : 12;
    case CALL_MMAP_RW:
        page = (void *)syscall(SYS_mmap, NULL, 8192, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        return page != MAP_FAILED ? 0 : 13;
    case CALL_MPROTECT_RW:
        return syscall(SYS_mprotect, page, 4096, PROT_READ | PROT_WRITE) == 0 ? 0 : 14;
    case CALL_SOCKET_UNIX:
        return (int)syscall(SYS_socket, AF_UNIX, SOCK_STREAM, 0);
    case CALL_SOCKET_RAW:
        return (int)syscall(SYS_socket, AF_INET, SOCK_RAW, IPPROTO_ICMP);
    case CALL_SOCKET_NETLINK:
        return (int)syscall(SYS_socket, AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
    case CALL_SOCKET_SEQPACKET:
        return (int)syscall(SYS_socket, AF_INET, SOCK_SEQPACKET, 0);
    case CALL_MMAP_EXEC:
        return (int)syscall(SYS_mmap, NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    case CALL_MPROTECT_EXEC:
        return (int)syscall(SYS_mprotect, page, 4096, PROT_READ | PROT_EXEC);
    case CALL_MADVISE_DONTNEED:
        return (int)syscall(SYS_madvise, page, 4096, MADV_DONTNEED);
    case CALL_MREMAP_FIXED:
        return (int)syscall(SYS_mremap, page, 4096, 4096, MREMAP_MAYMOVE | MREMAP_FIXED, (char *)page + (1 << 20));
    case CALL_OPENAT:
        return (int)syscall(SYS_openat, AT_FDCWD, "/etc/hostname", O_RDONLY);
    case CALL_GETPPID:
        return (int)syscall(SYS_getppid);
    case CALL_EXECVE: {
        char *const argv[] = {"/bin/true", NULL};
        return (int)syscall(SYS_execve, "/bin/true", argv, NULL);
    }
    case CALL_IOCTL_TIOCGWINSZ: {
        char winsize[8];
        return (int)syscall(SYS_ioctl, 2, 0x5413 /* TIOCGWINSZ */, winsize);
    }
    }
    return 99;
}

/* Forks a child that confines itself and makes the call; returns its wait status. */
static int confined(enum call c)
{
    int status = 0;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct errbuf err;
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core); /* a SIGSYS would dump core */
        if (sandbox_confine_prober(&err) < 0)
            syscall(SYS_exit_group, 98);
        syscall(SYS_exit_group, make_call(c));
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return status;
}

static void test_allowed_calls_go_through(void **state)
{
    static const enum call allowed[] = {CALL_NOTHING, CALL_SOCKET_TCP6, CALL_SOCKET_UDP4, CALL_MMAP_RW,
                                        CALL_MPROTECT_RW};
    (void)state;
    if (under_valgrind())
        skip();
    for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
        int status = confined(allowed[i]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
}

static void test_refused_calls_kill_with_sigsys(void **state)
{
    static const struct {
        enum call call;
        const char *name;
    } refused[] = {
        {CALL_SOCKET_UNIX, "socket(AF_UNIX)"},
        {CALL_SOCKET_RAW, "socket(AF_INET, SOCK_RAW)"},
        {CALL_SOCKET_NETLINK, "socket(AF_NETLINK)"},
        {CALL_SOCKET_SEQPACKET, "socket(AF_INET, SOCK_SEQPACKET)"},
        {CALL_MMAP_EXEC, "mmap(PROT_EXEC)"},
        {CALL_MPROTECT_EXEC, "mprotect(PROT_EXEC)"},
        {CALL_MADVISE_DONTNEED, "madvise(MADV_DONTNEED)"},
        {CALL_MREMAP_FIXED, "mremap(MREMAP_FIXED)"},
        {CALL_OPENAT, "openat"},
        {CALL_GETPPID, "getppid"},
        {CALL_EXECVE, "execve"},
        {CALL_IOCTL_TIOCGWINSZ, "ioctl(TIOCGWINSZ)"},
    };
    (void)state;
    if (under_valgrind())
        skip();
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        int status = confined(refused[i].call);
        if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSYS)
            fail_msg("%s went through the prober's filter (wait status %#x)", refused[i].name, (unsigned)status);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_allowed_calls_go_through),
        cmocka_unit_test(test_refused_calls_kill_with_sigsys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
