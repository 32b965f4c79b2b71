/* Replays inputs through a libFuzzer target without libFuzzer: every file in each directory
 * given (or each file given), in name order, goes to LLVMFuzzerTestOneInput once. Built with gcc
 * and the sanitizers, `make unit` runs it over fuzz/corpus/<name> and fuzz/regressions/<name>,
 * so a fixed crash stays fixed. Finding new inputs is libFuzzer's job (`make fuzz`). */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sanitizer/common_interface_defs.h>
#include <sanitizer/lsan_interface.h>

#include "fuzz.h"

/* No seed or regression input comes near this; a bigger file is a mistake in the corpus. */
#define REPLAY_INPUT_MAX_BYTES (16 * 1024 * 1024)

/* The input being replayed, named when the harness dies on it. */
static char current[4096];

static void name_current(void)
{
    static const char head[] = "replay: the input that failed: ";
    (void)!write(STDERR_FILENO, head, sizeof(head) - 1);
    (void)!write(STDERR_FILENO, current, strlen(current));
    (void)!write(STDERR_FILENO, "\n", 1);
}

/* A harness's __builtin_trap() (a broken invariant) arrives as SIGILL, and UBSan's reports as
 * SIGABRT when UBSAN_OPTIONS has abort_on_error=1 (UBSan has no death callback of ASan's): the
 * sanitizers leave both alone, so name the input, then die of it as before. */
static void on_fatal_signal(int sig)
{
    name_current();
    signal(sig, SIG_DFL);
    raise(sig);
}

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf;
    long len;

    if (!f || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || len > REPLAY_INPUT_MAX_BYTES ||
        fseek(f, 0, SEEK_SET) != 0) {
        fprintf(stderr, "replay: %s: %s\n", path, f ? "unreadable or too large" : strerror(errno));
        if (f)
            fclose(f);
        return -1;
    }
    /* Exactly len bytes (one more only so that malloc(0) is not asked): the harness must not read
     * past them, and ASan sees it if it does. */
    buf = malloc((size_t)len + 1);
    if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
        fprintf(stderr, "replay: %s: read failed\n", path);
        free(buf);
        fclose(f);
        return -1;
    }
    fclose(f);
    snprintf(current, sizeof(current), "%s", path);
    LLVMFuzzerTestOneInput(buf, (size_t)len);
    free(buf);
    /* A leak is found per input, as libFuzzer finds it, not once at exit for the whole run. */
    if (__lsan_do_recoverable_leak_check()) {
        name_current();
        return -1;
    }
    return 0;
}

/* Replays every regular file of dir; returns how many, or -1. */
static long replay_dir(const char *dir)
{
    struct dirent **names;
    long done = 0;
    int n = scandir(dir, &names, NULL, alphasort);

    if (n < 0) {
        fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
        return -1;
    }
    for (int i = 0; i < n; i++) {
        char path[4096];
        struct stat st;
        if (names[i]->d_name[0] != '.' &&
            snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name) < (int)sizeof(path) && stat(path, &st) == 0 &&
            S_ISREG(st.st_mode)) {
            if (replay_file(path) < 0)
                done = -1;
            else if (done >= 0)
                done++;
        }
        free(names[i]);
    }
    free(names);
    return done;
}

int main(int argc, char **argv)
{
    long total = 0;
    int failed = 0;

    if (argc < 2) {
        fprintf(stderr, "usage: %s DIR|FILE...  (replays each input through the fuzz target once)\n", argv[0]);
        return 2;
    }
    signal(SIGILL, on_fatal_signal);
    signal(SIGABRT, on_fatal_signal);
    __sanitizer_set_death_callback(name_current);
    for (int i = 1; i < argc; i++) {
        struct stat st;
        long n;
        if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
            n = replay_dir(argv[i]);
        else
            n = replay_file(argv[i]) < 0 ? -1 : 1;
        if (n < 0)
            failed = 1;
        else
            total += n;
    }
    if (failed)
        return 2;
    if (total == 0) {
        fprintf(stderr, "replay: no inputs in %s\n", argv[1]);
        return 2;
    }
    fprintf(stderr, "replay %s: %ld inputs, no crash, no broken invariant\n",
            strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0], total);
    return 0;
}
