/* Unit tests for lib/confine/sandbox.c: what the prober's filter refuses (that every rule is needed is
 * tests/contract/test_seccomp_minimal.py's job). Each case confines a forked child and makes raw
 * system calls, so neither libc nor the sanitizers add calls of their own. */
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
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
    /* The socket protocol, setsockopt and fcntl narrowed (issue 18), restart_syscall allowed. */
    CALL_SOCKET_TCP4_IPPROTO_TCP,
    CALL_SOCKET_TCP6_IPPROTO_TCP,
    CALL_SOCKET_TCP4_0,
    CALL_SOCKET_UDP6_0,
    CALL_SOCKET_MPTCP,
    CALL_SOCKET_SCTP_STREAM,
    CALL_SOCKET_SCTP_SEQPACKET,
    CALL_SOCKET_UDPLITE,
    CALL_SOCKET_UDP_IPPROTO_UDP,
    CALL_SETSOCKOPT_TCP_NODELAY,
    CALL_SETSOCKOPT_SO_REUSEADDR,
    CALL_SETSOCKOPT_SO_BINDTODEVICE,
    CALL_SETSOCKOPT_SO_SNDBUF,
    CALL_SETSOCKOPT_TCP_CONGESTION,
    CALL_SETSOCKOPT_IP_TTL,
    CALL_FCNTL_GETFL,
    CALL_FCNTL_SETFL,
    CALL_FCNTL_SETFD,
    CALL_FCNTL_GETFD,
    CALL_FCNTL_DUPFD,
    CALL_FCNTL_SETOWN,
    CALL_FCNTL_SETLK,
    CALL_RESTART_SYSCALL,
};

/* A TCP socket (an allowed call) for the setsockopt and fcntl cases. */
static int tcp_socket(void)
{
    return (int)syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);
}

static int set_int_option(int level, int name)
{
    int fd = tcp_socket(), one = 1;
    if (fd < 0)
        return 20;
    return syscall(SYS_setsockopt, fd, level, name, &one, sizeof(one)) == 0 ? 0 : 21;
}

static int fcntl_call(int cmd, long arg)
{
    int fd = tcp_socket();
    if (fd < 0)
        return 20;
    return syscall(SYS_fcntl, fd, cmd, arg) >= 0 ? 0 : 22;
}

/* mmap by its syscall (libc's wrapper is not what the filter sees), as a pointer. */
static void *mmap_raw(size_t len, int prot)
{
    long addr = syscall(SYS_mmap, NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return (void *)addr;
}

/* The calls the child makes, each checked for the success that proves it went through. */
static int make_call(enum call c)
{
    void *page = mmap_raw(4096, PROT_READ | PROT_WRITE);
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
        page = mmap_raw(8192, PROT_NONE);
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
        static char true_path[] = "/bin/true";
        char *const argv[] = {true_path, NULL};
        return (int)syscall(SYS_execve, "/bin/true", argv, NULL);
    }
    case CALL_IOCTL_TIOCGWINSZ: {
        char winsize[8];
        return (int)syscall(SYS_ioctl, 2, 0x5413 /* TIOCGWINSZ */, winsize);
    }
    case CALL_SOCKET_TCP4_IPPROTO_TCP:
        return syscall(SYS_socket, AF_INET, SOCK_STREAM, IPPROTO_TCP) >= 0 ? 0 : 15;
    case CALL_SOCKET_TCP6_IPPROTO_TCP:
        return syscall(SYS_socket, AF_INET6, SOCK_STREAM, IPPROTO_TCP) >= 0 ? 0 : 16;
    case CALL_SOCKET_TCP4_0:
        return syscall(SYS_socket, AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0) >= 0 ? 0 : 17;
    case CALL_SOCKET_UDP6_0:
        return syscall(SYS_socket, AF_INET6, SOCK_DGRAM, 0) >= 0 ? 0 : 18;
    case CALL_SOCKET_MPTCP:
        return (int)syscall(SYS_socket, AF_INET, SOCK_STREAM, 262 /* IPPROTO_MPTCP */);
    case CALL_SOCKET_SCTP_STREAM:
        return (int)syscall(SYS_socket, AF_INET6, SOCK_STREAM, IPPROTO_SCTP);
    case CALL_SOCKET_SCTP_SEQPACKET:
        return (int)syscall(SYS_socket, AF_INET, SOCK_SEQPACKET, IPPROTO_SCTP);
    case CALL_SOCKET_UDPLITE:
        return (int)syscall(SYS_socket, AF_INET, SOCK_DGRAM, IPPROTO_UDPLITE);
    case CALL_SOCKET_UDP_IPPROTO_UDP:
        return (int)syscall(SYS_socket, AF_INET, SOCK_DGRAM, IPPROTO_UDP);
    case CALL_SETSOCKOPT_TCP_NODELAY:
        return set_int_option(IPPROTO_TCP, TCP_NODELAY);
    case CALL_SETSOCKOPT_SO_REUSEADDR:
        return set_int_option(SOL_SOCKET, SO_REUSEADDR);
    case CALL_SETSOCKOPT_SO_BINDTODEVICE:
        return set_int_option(SOL_SOCKET, SO_BINDTODEVICE);
    case CALL_SETSOCKOPT_SO_SNDBUF:
        return set_int_option(SOL_SOCKET, SO_SNDBUF);
    case CALL_SETSOCKOPT_TCP_CONGESTION:
        return set_int_option(IPPROTO_TCP, TCP_CONGESTION);
    case CALL_SETSOCKOPT_IP_TTL:
        return set_int_option(IPPROTO_IP, IP_TTL);
    case CALL_FCNTL_GETFL:
        return fcntl_call(F_GETFL, 0);
    case CALL_FCNTL_SETFL:
        return fcntl_call(F_SETFL, O_RDWR | O_NONBLOCK);
    case CALL_FCNTL_SETFD:
        return fcntl_call(F_SETFD, FD_CLOEXEC);
    case CALL_FCNTL_GETFD:
        return fcntl_call(F_GETFD, 0);
    case CALL_FCNTL_DUPFD:
        return fcntl_call(F_DUPFD, 100);
    case CALL_FCNTL_SETOWN:
        return fcntl_call(F_SETOWN, 1);
    case CALL_FCNTL_SETLK: {
        struct flock lock = {.l_type = F_RDLCK, .l_whence = SEEK_SET};
        int fd = tcp_socket();
        return fd < 0 ? 20 : (int)syscall(SYS_fcntl, fd, F_SETLK, &lock);
    }
    case CALL_RESTART_SYSCALL:
        /* With nothing to resume, the kernel answers EINTR: the call went through the filter. */
        return syscall(SYS_restart_syscall) == -1 && errno == EINTR ? 0 : 19;
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
    static const enum call allowed[] = {
        CALL_NOTHING,
        CALL_SOCKET_TCP6,
        CALL_SOCKET_UDP4,
        CALL_MMAP_RW,
        CALL_MPROTECT_RW,
        CALL_SOCKET_TCP4_IPPROTO_TCP,
        CALL_SOCKET_TCP6_IPPROTO_TCP,
        CALL_SOCKET_TCP4_0,
        CALL_SOCKET_UDP6_0,
        CALL_SETSOCKOPT_TCP_NODELAY,
        CALL_FCNTL_GETFL,
        CALL_FCNTL_SETFL,
        CALL_FCNTL_SETFD,
        CALL_RESTART_SYSCALL,
    };
    (void)state;
    if (under_valgrind())
        skip();
    for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
        int status = confined(allowed[i]);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            fail_msg("allowed call %d failed in the prober's filter (wait status %#x)", (int)allowed[i],
                     (unsigned)status);
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
        {CALL_SOCKET_MPTCP, "socket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP)"},
        {CALL_SOCKET_SCTP_STREAM, "socket(AF_INET6, SOCK_STREAM, IPPROTO_SCTP)"},
        {CALL_SOCKET_SCTP_SEQPACKET, "socket(AF_INET, SOCK_SEQPACKET, IPPROTO_SCTP)"},
        {CALL_SOCKET_UDPLITE, "socket(AF_INET, SOCK_DGRAM, IPPROTO_UDPLITE)"},
        {CALL_SOCKET_UDP_IPPROTO_UDP, "socket(AF_INET, SOCK_DGRAM, IPPROTO_UDP) (c-ares passes 0)"},
        {CALL_SETSOCKOPT_SO_REUSEADDR, "setsockopt(SOL_SOCKET, SO_REUSEADDR)"},
        {CALL_SETSOCKOPT_SO_BINDTODEVICE, "setsockopt(SOL_SOCKET, SO_BINDTODEVICE)"},
        {CALL_SETSOCKOPT_SO_SNDBUF, "setsockopt(SOL_SOCKET, SO_SNDBUF)"},
        {CALL_SETSOCKOPT_TCP_CONGESTION, "setsockopt(IPPROTO_TCP, TCP_CONGESTION)"},
        {CALL_SETSOCKOPT_IP_TTL, "setsockopt(IPPROTO_IP, IP_TTL)"},
        {CALL_FCNTL_GETFD, "fcntl(F_GETFD)"},
        {CALL_FCNTL_DUPFD, "fcntl(F_DUPFD)"},
        {CALL_FCNTL_SETOWN, "fcntl(F_SETOWN)"},
        {CALL_FCNTL_SETLK, "fcntl(F_SETLK)"},
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
