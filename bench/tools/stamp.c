/* A stand-in for `ray` in the benchmarks: it notes the instant it was exec'd, then either execs
 * the real program or holds still. The instant is what the benchmarks measure up to, so this
 * does as little as possible before taking it.
 *
 *   BENCH_STAMP_FILE  appends "<CLOCK_REALTIME ns> <pid>\n" (one write, O_APPEND: many writers)
 *   BENCH_EXEC        then execs this program with our argv[1..] (the real ray), or
 *   BENCH_HOLD=1      then waits for a signal (a worker whose `ray start --block` never returns),
 *   neither           exits 0.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int record_instant(const char *path)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    char line[64];
    int n =
        snprintf(line, sizeof(line), "%lld %ld\n", (long long)now.tv_sec * 1000000000LL + now.tv_nsec, (long)getpid());
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    int ok = write(fd, line, (size_t)n) == n;
    close(fd);
    return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
    (void)argc;
    const char *stamp_file = getenv("BENCH_STAMP_FILE");
    if (stamp_file && record_instant(stamp_file) < 0) {
        perror(stamp_file);
        return 70;
    }
    const char *real = getenv("BENCH_EXEC");
    if (real && real[0]) {
        argv[0] = (char *)real;
        execv(real, argv);
        perror(real);
        return 127;
    }
    const char *hold = getenv("BENCH_HOLD");
    if (hold && strcmp(hold, "1") == 0)
        for (;;)
            pause();
    return 0;
}
