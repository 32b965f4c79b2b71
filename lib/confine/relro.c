/* Makes the RELRO segment read-only, the one thing a dynamic loader does that musl's static-PIE
 * start-up does not: rcrt1.o's _dlstart_c applies the relocations and calls __libc_start_main
 * (crt/rcrt1.c, ldso/dlstart.c), and only ldso/dynlink.c, which a static binary never runs,
 * mprotects PT_GNU_RELRO. Without this, .init_array and .got stay writable for the whole run.
 * Called from main, not from a constructor: .init_array has run by then and nothing writes those
 * pages after relocation. tests/release/test_release_binaries.py looks at a live process. */
#include "relro.h"

#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct relro_span {
    uintptr_t start, end; /* page-aligned run-time addresses; start == end: no RELRO */
    int found;
};

/* The first object dl_iterate_phdr reports is the program itself (musl's static version reports
 * only it, with the load base from _DYNAMIC). Rounded down at both ends, as musl's and glibc's
 * loaders do: the linker pads RELRO's end to a page, so no writable data shares its last page. */
static int find_relro(struct dl_phdr_info *info, size_t size, void *data)
{
    struct relro_span *span = data;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    (void)size;
    for (size_t i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_GNU_RELRO)
            continue;
        span->start = (info->dlpi_addr + ph->p_vaddr) & ~(page - 1);
        span->end = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz) & ~(page - 1);
        span->found = 1;
    }
    return 1; /* the program only, not the libraries a dynamic (test) build has */
}

int relro_protect(struct errbuf *err)
{
    struct relro_span span = {0, 0, 0};
    dl_iterate_phdr(find_relro, &span);
    if (!span.found)
        return errbuf_set(err, "this binary has no PT_GNU_RELRO segment (it was linked without -z relro)");
    if (span.end > span.start && mprotect((void *)span.start, span.end - span.start, PROT_READ) < 0)
        return errbuf_set(err, "cannot make the RELRO pages read-only: mprotect: %s", strerror(errno));
    return 0;
}
